"""Full disk: the tick log on a tiny tmpfs stops with one clear error, the caller's loop
goes on, and every row already written reads back intact (README "Full disk").

Needs root to mount the tmpfs; skipped (with the reason) otherwise.
"""
import os
import subprocess
import tempfile

import numpy as np
import pytest

from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, NUMERIC_COLUMNS, LogWriteError, LogWriter, read_log

TMPFS_SIZE = "64k"
TICKS = 2000            # ~1.1 MB of rows at 50 Hz: 40 s of flight, far more than 64 KiB


@pytest.fixture
def tiny_disk():
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount_point = tempfile.mkdtemp(prefix="brov2_full_disk_")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % TMPFS_SIZE, "tmpfs", mount_point],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if done.returncode != 0:
        os.rmdir(mount_point)
        pytest.skip("cannot mount a tmpfs here: %s" % done.stdout.strip())
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", mount_point], check=False)
        os.rmdir(mount_point)


def tick_row(k):
    """A row whose every value tells the tick it belongs to (and varies in text length)."""
    row = {c: k * 1.0 + j * 1e-3 + (k % 7) * 1.234567e-9 for j, c in enumerate(NUMERIC_COLUMNS)}
    row["mode"] = "ACTIVE"
    return row


def test_full_disk_stops_once_keeps_rows_and_the_loop_runs(tiny_disk):
    path = os.path.join(tiny_disk, "log.csv")
    writer = LogWriter(path)
    errors, written, ticks = [], [], 0
    for k in range(TICKS):          # stand-in for the control loop: it must reach the end
        try:
            if writer.write(tick_row(k)):
                written.append(k)
        except LogWriteError as exc:
            errors.append(str(exc))
        ticks += 1
    writer.close()

    assert ticks == TICKS
    assert len(errors) == 1, errors
    assert "disk full" in errors[0] and path in errors[0], errors[0]
    assert writer.error is not None and writer.rows == len(written)
    assert 10 < len(written) < TICKS, "the 64 KiB disk should hold some rows, not all"
    assert written == list(range(len(written))), "rows after the error must not be written"

    log = read_log(path)   # raises on a torn row
    assert len(log["time_s"]) == len(written)
    for c in NUMERIC_COLUMNS:
        np.testing.assert_array_equal(log[c], [tick_row(k)[c] for k in written], err_msg=c)
    assert log["mode"] == ["ACTIVE"] * len(written)
    with open(path, "rb") as handle:
        text = handle.read()
    assert text.endswith(b"\r\n") and text.count(b"\r\n") == len(written) + 1


def test_header_that_does_not_fit_is_a_clear_error(tiny_disk):
    fd = os.open(os.path.join(tiny_disk, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    with pytest.raises(LogWriteError, match="disk full"):
        LogWriter(os.path.join(tiny_disk, "log.csv"))


def test_a_killed_writer_leaves_only_whole_rows(tmp_path):
    """SIGKILL at any moment: each row is one unbuffered write, so the file never holds a torn row."""
    import signal
    import sys
    import time
    path = str(tmp_path / "log.csv")
    code = ("import sys\nfrom brov2_hybrid.tick_log.logfile import LogWriter, NUMERIC_COLUMNS\n"
            "w = LogWriter(sys.argv[1])\nk = 0\n"
            "while True:\n"
            "    row = {c: k + j * 1e-3 for j, c in enumerate(NUMERIC_COLUMNS)}\n"
            "    row['mode'] = 'ACTIVE'\n    w.write(row)\n    k += 1\n")
    proc = subprocess.Popen([sys.executable, "-c", code, path])
    deadline = time.monotonic() + 20.0
    while (not os.path.exists(path) or os.path.getsize(path) < 200000) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    log = read_log(path)
    n = len(log["time_s"])
    assert n > 100
    np.testing.assert_array_equal(log["time_s"], np.arange(n))
    with open(path, "rb") as handle:
        assert handle.read().endswith(b"\r\n")
    assert len(LOG_COLUMNS) == len(NUMERIC_COLUMNS) + 1
