"""Key files, timestamps and the stream-timestamp guard of brov2_hybrid.link.mavlink_signing."""
import hashlib
import os

import pytest

os.environ["MAVLINK20"] = "1"
from pymavlink.dialects.v20 import ardupilotmega as mavlink  # noqa: E402

from brov2_hybrid.link import mavlink_signing as ms  # noqa: E402
from brov2_hybrid.errors import ParameterError  # noqa: E402

KEY = bytes(range(32))


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_key_file_forms(tmp_path):
    assert ms.load_key(write(tmp_path, "hex", (KEY.hex() + "\n").encode())) == KEY
    assert ms.load_key(write(tmp_path, "HEX", KEY.hex().upper().encode())) == KEY
    assert ms.load_key(write(tmp_path, "raw", KEY)) == KEY
    # MAVProxy's `signing setup my secret`: key = SHA-256 of the passphrase.
    phrase = ms.load_key(write(tmp_path, "pass", b"passphrase: my secret\n"))
    assert phrase == hashlib.sha256(b"my secret").digest()


@pytest.mark.parametrize("content, match", [
    (b"abcd", "got 4 characters"),
    (KEY.hex()[:-1].encode() + b"g", "not all hexadecimal"),
    (b"passphrase:   \n", "no passphrase"),
    (b"\xff\xfe" * 20, "binary data"),
    (b"", "got 0 characters"),
])
def test_bad_key_files_are_named_and_not_quoted(tmp_path, content, match):
    path = write(tmp_path, "bad.key", content)
    with pytest.raises(ParameterError, match=match) as info:
        ms.load_key(path)
    assert path in str(info.value)
    if content and not content.startswith(b"passphrase"):   # the secret itself is never echoed
        assert content.decode("latin-1").strip() not in str(info.value)


def test_missing_key_file(tmp_path):
    with pytest.raises(ParameterError, match="cannot read it"):
        ms.load_key(str(tmp_path / "absent.key"))


def test_timestamp_units_and_disabling_key():
    assert ms.timestamp_now(ms.SIGNING_EPOCH_UNIX_S) == 0
    assert ms.timestamp_now(ms.SIGNING_EPOCH_UNIX_S + 1.5) == 150000   # 10 us ticks
    assert ms.is_disabling(bytes(32), 0)
    assert not ms.is_disabling(bytes(32), 5) and not ms.is_disabling(KEY, 0)
    assert ms.fingerprint(KEY) != ms.fingerprint(bytes(32)) and KEY.hex()[:8] not in ms.fingerprint(KEY)


def _frame(key, timestamp, link_id=0, sysid=255, compid=190):
    tx = mavlink.MAVLink(None, srcSystem=sysid, srcComponent=compid)
    tx.signing.secret_key, tx.signing.sign_outgoing = key, True
    tx.signing.timestamp, tx.signing.link_id = timestamp, link_id
    return tx.rc_channels_override_encode(1, 1, *[1500] * 8).pack(tx)


def _receiver(guarded):
    rx = mavlink.MAVLink(None)
    rx.robust_parsing = True
    rx.signing.secret_key, rx.signing.timestamp = KEY, 1000
    rx.signing.allow_unsigned_callback = ms.accept_unsigned
    return ms.verify_before_updating_streams(rx) if guarded else rx


@pytest.mark.parametrize("guarded", [False, True])
def test_a_forged_future_timestamp_cannot_block_a_stream_when_guarded(guarded):
    rx = _receiver(guarded)
    assert rx.parse_buffer(bytearray(_frame(KEY, 2000)))[0].get_type() == "RC_CHANNELS_OVERRIDE"
    forged = rx.parse_buffer(bytearray(_frame(b"\x07" * 32, 10 ** 12)))[0]   # wrong key, same stream
    assert forged.get_type() == "BAD_DATA" and ms.sender_of(forged)[:2] == (255, 190)
    good = rx.parse_buffer(bytearray(_frame(KEY, 3000)))[0]
    # Unguarded, pymavlink recorded the forged timestamp and now refuses the real pilot.
    assert (good.get_type() == "RC_CHANNELS_OVERRIDE") == guarded


def test_replayed_frame_is_refused_and_radio_status_passes_unsigned():
    rx = _receiver(True)
    frame = bytearray(_frame(KEY, 2000))
    assert rx.parse_buffer(bytearray(frame))[0].get_type() == "RC_CHANNELS_OVERRIDE"
    assert rx.parse_buffer(bytearray(frame))[0].get_type() == "BAD_DATA"
    tx = mavlink.MAVLink(None, srcSystem=3, srcComponent=68)
    radio = tx.radio_status_encode(200, 190, 100, 90, 80, 0, 0).pack(tx)
    assert rx.parse_buffer(bytearray(radio))[0].get_type() == "RADIO_STATUS"
