"""MAVLink 2 signing of the simulated vehicle: one key and one state for every link.

As ArduPilot (GCS_Signing.cpp, see :mod:`brov2_hybrid.link.mavlink_signing`): SETUP_SIGNING
(or ``--signing-key-file`` at start, a vehicle keyed before) keys every link at once
with one key and one table of stream timestamps; from then on everything sent is
signed and unsigned or wrongly signed messages are dropped (counted per source, with
a rate-limited STATUSTEXT), except RADIO_STATUS and RADIO. An all-zero key with
timestamp 0 turns signing off. Unlike ArduPilot, no channel is exempt: ArduPilot lets
channel 0 (a flight controller's USB port) through unsigned; our TCP port stands for
the tether network, the link signing is meant to protect.
"""
import logging
import time

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link import mavlink_signing

LOG = logging.getLogger(__name__)


class LinkSigning(object):
    """The signing state every link's parser and the encoder share, and the count of refused frames.

    Parameters
    ----------
    warning_interval_s : float
        Least simulated time between two warnings about one sender [s].
    counters : dict
        Where ``signature_rejected`` (int) and ``signature_rejected_by_source``
        ({"system/component": count}) are kept (the vehicle's counters).
    """

    def __init__(self, warning_interval_s, counters):
        # One signing state for every link and for what we send (ArduPilot: one key,
        # one shared signing_streams table; GCS_Signing.cpp load_signing_key).
        self.signing = mavlink.MAVLinkSigning()
        self.warning_interval_s = warning_interval_s
        self.counters = counters
        counters.setdefault("signature_rejected", 0)
        counters.setdefault("signature_rejected_by_source", {})
        self._warned_s = {}   # (system, component) -> last STATUSTEXT time [s]

    @property
    def enabled(self):
        """True while a signing key is set (everything sent is signed, unsigned frames are refused)."""
        return self.signing.secret_key is not None

    def setup_parser(self, parser):
        """Make a link's parser check signatures with the shared state."""
        parser.signing = self.signing
        mavlink_signing.verify_before_updating_streams(parser)

    def set_key(self, key, initial_timestamp, unix_s=None):
        """Key every link with ``key`` (32 bytes); an all-zero key with timestamp 0 disables.

        The next outgoing timestamp is the largest of ``initial_timestamp``, the current
        one and the wall clock (ArduPilot raises it to GPS time: update_signing_timestamp).
        """
        key = bytes(bytearray(key))
        if len(key) != mavlink_signing.KEY_BYTES:
            raise ValueError("signing key: expected %d bytes, got %d" % (mavlink_signing.KEY_BYTES, len(key)))
        signing = self.signing
        if mavlink_signing.is_disabling(key, initial_timestamp):
            signing.secret_key = None
            signing.sign_outgoing = False
            signing.allow_unsigned_callback = None
            LOG.info("MAVLink signing disabled (all-zero key)")
            return
        signing.secret_key = key
        signing.sign_outgoing = True
        signing.allow_unsigned_callback = mavlink_signing.accept_unsigned
        signing.link_id = 0
        signing.timestamp = max(int(initial_timestamp), signing.timestamp,
                                mavlink_signing.timestamp_now(time.time() if unix_s is None else unix_s))
        LOG.info("MAVLink signing enabled on every link, key fingerprint %s", mavlink_signing.fingerprint(key))

    def on_rejected(self, message, t_s):
        """A frame refused by signing (BAD_DATA) at ``t_s``: count it.

        Returns the warning text to broadcast, or None while its sender was warned
        about less than ``warning_interval_s`` ago.
        """
        self.counters["signature_rejected"] += 1
        sender = mavlink_signing.sender_of(message)
        source = sender[:2] if sender else None
        by_source = self.counters["signature_rejected_by_source"]
        key = "%d/%d" % source if source else "unknown"
        by_source[key] = by_source.get(key, 0) + 1
        last = self._warned_s.get(source)
        if last is not None and t_s - last < self.warning_interval_s:
            return None
        self._warned_s[source] = t_s
        signed = bool(bytes(message.data)[2] & mavlink.MAVLINK_IFLAG_SIGNED) if sender else False
        text = "Signing: dropped %s msg %s from %s" % ("badly signed" if signed else "unsigned",
                                                       sender[2] if sender else "?", key)
        LOG.warning("%s (%d so far from it)", text, by_source[key])
        return text
