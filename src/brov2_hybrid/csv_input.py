"""Input CSV files read as UTF-8 text, with errors naming ``file:line``.

:func:`open_csv` is how every reader of a dive CSV, a thrust table or a log opens its
file (:mod:`brov2_hybrid.dive.dive_csv`, :mod:`brov2_hybrid.vehicle.thrust_table`,
:mod:`brov2_hybrid.tick_log.logfile`).
"""
import codecs

from brov2_hybrid.errors import InputDataError

#: Longest line an input CSV may have [bytes]; a longer one is refused (it is not a
#: dive, thrust table or log written by a person or by this package, and reading it
#: whole could exhaust memory, e.g. a binary file without newlines).
MAX_CSV_LINE_BYTES = 1 << 20


class Utf8Lines(object):
    """The lines of a UTF-8 text file, for :mod:`csv` readers, with errors naming file:line.

    A UTF-8 byte-order mark at the start (what spreadsheet programs write for "CSV
    UTF-8") is dropped. A byte sequence that is not UTF-8 (Latin-1 ``é``, random
    bytes), a line longer than :data:`MAX_CSV_LINE_BYTES` or a read error raises
    :class:`InputDataError` naming the file, the line and what was expected. Lines
    keep their endings (like ``open(path, newline="")``); ``line`` counts lines read.
    A context manager; iterate it (``csv.reader(lines)``).
    """

    def __init__(self, path, what):
        self.path = path
        self.what = what
        self.line = 0
        try:
            self._handle = open(path, "rb")
        except OSError as exc:
            raise InputDataError("%s: cannot open %s (%s)" % (path, what, exc))

    def __iter__(self):
        return self

    def __next__(self):
        try:
            raw = self._handle.readline(MAX_CSV_LINE_BYTES + 1)
        except OSError as exc:
            raise InputDataError("%s:%d: cannot read %s (%s)" % (self.path, self.line + 1, self.what, exc))
        if not raw:
            raise StopIteration
        self.line += 1
        if len(raw) > MAX_CSV_LINE_BYTES:
            raise InputDataError("%s:%d: %s line longer than %d bytes; expected a text CSV file"
                                 % (self.path, self.line, self.what, MAX_CSV_LINE_BYTES))
        if self.line == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputDataError(
                "%s:%d: %s is not UTF-8 text: byte 0x%02x at byte %d of the line (%s); expected UTF-8 "
                "(in a spreadsheet program, save as 'CSV UTF-8')"
                % (self.path, self.line, self.what, raw[exc.start], exc.start + 1, exc.reason))
        if b"\x00" in raw:
            raise InputDataError("%s:%d: %s has a NUL byte at byte %d of the line; expected UTF-8 text "
                                 "(UTF-16 text or a binary file?)"
                                 % (self.path, self.line, self.what, raw.index(b"\x00") + 1))
        return text

    def close(self):
        """Close the file."""
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def open_csv(path, what):
    """Open ``path`` for csv reading as UTF-8 (BOM accepted): a :class:`Utf8Lines`.

    Raises InputDataError naming ``what`` and the file when it cannot be opened, and
    (while reading) naming the line that is not UTF-8.
    """
    return Utf8Lines(path, what)
