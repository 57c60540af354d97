"""MAVLink 2 message signing as ArduPilot does it, on top of pymavlink's implementation.

ArduPilot (libraries/GCS_MAVLink/GCS_Signing.cpp): SETUP_SIGNING (256) carries a 32-byte
secret key and an initial timestamp; ``GCS_MAVLINK::handle_setup_signing`` stores them
and ``load_signing_key`` enables signing on *all* channels at once (one key, one
``signing_streams`` table shared by every channel); a key and timestamp that are all
zero disable signing. Once keyed, incoming messages must be correctly signed, except
those ``accept_unsigned_callback`` lets through: RADIO_STATUS and RADIO (and, on
ArduPilot, everything on channel 0, the USB port of a flight controller).

Signing timestamps count 10 microseconds since 2015-01-01 00:00:00 UTC. The signature
(SHA-256 over key + frame, first 6 bytes) is pymavlink's
(``MAVLink.check_signature`` / ``MAVLink_message.pack``); nothing here hashes frames.

Key files (``signing_key_file`` of the bridge, ``--signing-key-file`` of brov2_sitl)
hold the 32-byte key in one of three forms:

* one line of 64 hexadecimal digits: the key itself;
* one line ``passphrase: TEXT``: the key is SHA-256(TEXT), as MAVProxy's
  ``signing setup TEXT`` derives it (so the same passphrase keys both);
* exactly 32 bytes of binary data: the key itself.
"""
import binascii
import hashlib
import os
import time

from brov2_hybrid.errors import ParameterError

KEY_BYTES = 32
#: Unix time of 2015-01-01 00:00:00 UTC, the origin of signing timestamps.
SIGNING_EPOCH_UNIX_S = 1420070400
#: Signing timestamp units per second (10 microsecond ticks).
TICKS_PER_S = 100000
PASSPHRASE_PREFIX = "passphrase:"
#: Message ids ArduPilot accepts unsigned on a keyed link (accept_unsigned_callback).
ACCEPT_UNSIGNED_IDS = (109, 166)  # RADIO_STATUS, RADIO


def key_from_passphrase(passphrase):
    """The 32-byte key MAVProxy's ``signing setup PASSPHRASE`` uses: SHA-256 of the text."""
    return hashlib.sha256(passphrase.encode("utf-8")).digest()


def parse_key(data, source):
    """32-byte key from the bytes ``data`` of a key file (formats: module docstring).

    Raises
    ------
    ParameterError
        Naming ``source`` and saying which forms are accepted; never quoting the content.
    """
    if len(data) == KEY_BYTES and not _is_text_key(data):
        return bytes(data)
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ParameterError("%s: expected 64 hex digits, 'passphrase: TEXT' or exactly 32 bytes; got %d bytes "
                             "of binary data" % (source, len(data)))
    if text.lower().startswith(PASSPHRASE_PREFIX):
        passphrase = text[len(PASSPHRASE_PREFIX):].strip()
        if not passphrase:
            raise ParameterError("%s: 'passphrase:' is followed by no passphrase" % source)
        return key_from_passphrase(passphrase)
    if len(text) == 2 * KEY_BYTES:
        try:
            return binascii.unhexlify(text)
        except (binascii.Error, ValueError):
            raise ParameterError("%s: 64 characters but not all hexadecimal digits" % source)
    raise ParameterError("%s: expected one line of 64 hex digits (a 32-byte key), 'passphrase: TEXT' or "
                         "exactly 32 bytes; got %d characters" % (source, len(text)))


def _is_text_key(data):
    """True when 32 bytes read as a text form would (never: 64 hex or a passphrase line)."""
    return data.lower().startswith(PASSPHRASE_PREFIX.encode("ascii"))


def load_key(path):
    """Read the 32-byte key from ``path``; :class:`ParameterError` naming the file if unusable."""
    path = os.path.expanduser(str(path))
    try:
        with open(path, "rb") as stream:
            data = stream.read(4096)
    except OSError as exc:
        raise ParameterError("signing key file %s: cannot read it (%s)" % (path, exc.strerror or exc))
    return parse_key(data, "signing key file %s" % path)


def fingerprint(key):
    """Short, non-secret identifier of ``key`` for logs: first 8 hex digits of SHA-256(key)."""
    return hashlib.sha256(b"brov2_hybrid key fingerprint" + bytes(key)).hexdigest()[:8]


def timestamp_now(unix_s=None):
    """Signing timestamp [10 us since 2015-01-01] of Unix time ``unix_s`` (default now)."""
    unix_s = time.time() if unix_s is None else unix_s
    return int(max(0.0, unix_s - SIGNING_EPOCH_UNIX_S) * TICKS_PER_S)


def is_disabling(key, initial_timestamp):
    """ArduPilot's load_signing_key: an all-zero key with timestamp 0 turns signing off."""
    return initial_timestamp == 0 and not any(bytearray(key))


def accept_unsigned(mav, message_id):
    """pymavlink allow_unsigned_callback with ArduPilot's accept list."""
    return message_id in ACCEPT_UNSIGNED_IDS


def verify_before_updating_streams(mav):
    """Make ``mav`` (a pymavlink MAVLink parser) update a stream's timestamp only for a
    correctly signed frame, as the C library's ``mavlink_signature_check`` does.

    pymavlink's ``check_signature`` records the timestamp of a frame before comparing
    signatures, so a wrongly signed frame with a far-future timestamp would make every
    later good frame of that (link, system, component) stream look replayed. The check
    itself stays pymavlink's; this only restores the stream's previous timestamp when it
    fails.
    """
    check = mav.check_signature

    def checked(msgbuf, src_system, src_component):
        stream = (msgbuf[-13], src_system, src_component)
        streams = mav.signing.stream_timestamps
        before = streams.get(stream)
        ok = check(msgbuf, src_system, src_component)
        if not ok:
            if before is None:
                streams.pop(stream, None)
            else:
                streams[stream] = before
        return ok

    mav.check_signature = checked
    return mav


def sender_of(bad_data):
    """(system, component, message id) of a rejected MAVLink 2 frame (BAD_DATA), or None."""
    data = bytes(getattr(bad_data, "data", b""))
    if len(data) < 10 or data[0] != 0xFD:
        return None
    return data[5], data[6], data[7] | (data[8] << 8) | (data[9] << 16)


def sign_connection(connection, key, link_id=None, unix_s=None):
    """Make a pymavlink ``mavutil`` connection sign what it sends and verify what it receives.

    Incoming frames must be correctly signed (RADIO_STATUS / RADIO excepted, as on
    ArduPilot); others come out of ``recv_match`` as BAD_DATA "Invalid signature".
    The outgoing timestamp starts at the wall clock (``unix_s``, default now).
    """
    connection.setup_signing(bytes(key), sign_outgoing=True, allow_unsigned_callback=accept_unsigned,
                             initial_timestamp=timestamp_now(unix_s), link_id=link_id)
    verify_before_updating_streams(connection.mav)
    return connection


def send_setup_signing(connection, target_system, target_component, key):
    """Key the vehicle: SETUP_SIGNING with ``key`` and the connection's current timestamp.

    Sent signed when ``connection`` is already signing: a vehicle keyed with the same key
    accepts it, an unkeyed one ignores the signature (GCS_MAVLINK::handle_setup_signing).
    """
    timestamp = max(connection.mav.signing.timestamp, timestamp_now())
    connection.mav.setup_signing_send(target_system, target_component, bytes(key), timestamp)
