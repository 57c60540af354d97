"""The MAVLink bridge's connection to the vehicle (``nodes/mavlink_bridge``), over pymavlink.

:class:`MavlinkConnection` opens one pymavlink connection (MAVLink 2, the ardupilotmega dialect,
signed when a key is given: :mod:`brov2_hybrid.link.mavlink_signing`), lets several threads send
on it under one lock (:meth:`MavlinkConnection.send`), notes the end of a stream (EOF) instead of
letting pymavlink retry on its own, and closes it so that the bridge's MAVLink thread can
reconnect. On a signed link it keys the vehicle (SETUP_SIGNING) when asked to and counts the
vehicle's frames refused by signing (:class:`~brov2_hybrid.link.link_state.SigningLink`). It logs through ``log``, any object with rospy's ``loginfo``, ``logwarn`` and
``logwarn_throttle`` (the node passes rospy; tests a stand-in).
"""
import threading

from pymavlink import mavutil

from brov2_hybrid.link import link_state
from brov2_hybrid.link import mavlink_signing

#: Period of the "cannot connect" warning while the vehicle's address does not open [s].
CONNECT_WARN_PERIOD_S = 10.0


class MavlinkConnection(object):
    """One pymavlink connection to ``url`` as ``ids`` (system, component) to the vehicle ``target``
    (system, component), re-opened after :meth:`close`; ``signing_key`` (32 bytes or None): sign
    what is sent, accept only signed frames; ``signing_setup``: key the vehicle with it.
    ``warn_period_s``: period of the send-failure warning; ``reconnect_period_s``: how often the
    caller retries :meth:`open` (said in the warning). ``connect`` makes the pymavlink
    connection (tests pass a stand-in)."""

    def __init__(self, url, ids, target, signing_key, signing_setup, warn_period_s, reconnect_period_s, log,
                 connect=mavutil.mavlink_connection):
        self.url = url
        self.ids = (int(ids[0]), int(ids[1]))
        self.target = (int(target[0]), int(target[1]))
        self.signing_key = signing_key
        self.signing = link_state.SigningLink(signing_setup, self.target[0])
        self.warn_period_s = float(warn_period_s)
        self.reconnect_period_s = float(reconnect_period_s)
        self.log = log
        self._connect = connect
        self._lock = threading.Lock()      # pymavlink connection writes
        self.conn = None                   #: the open pymavlink connection, or None
        self.eof = False                   #: the vehicle closed the connection (pymavlink's hook)

    def open(self):
        """Open the connection; False (with a throttled warning) when it cannot be opened now."""
        try:
            conn = self._connect(self.url, source_system=self.ids[0], source_component=self.ids[1],
                                 dialect="ardupilotmega", autoreconnect=False, retries=0)
        except (OSError, ValueError) as exc:
            self.log.logwarn_throttle(CONNECT_WARN_PERIOD_S, "mavlink_bridge: cannot connect to %s (%s); retrying "
                                      "every %.1f s" % (self.url, exc, self.reconnect_period_s))
            return False
        # pymavlink prints and retries on EOF itself; note it and let the caller reconnect instead.
        conn.handle_eof = conn.handle_disconnect = self._on_eof
        self.eof = False
        if self.signing_key is not None:
            mavlink_signing.sign_connection(conn, self.signing_key)
            self.signing.opened()
        self.conn = conn
        self.log.loginfo("mavlink_bridge: connected to %s, waiting for the vehicle's HEARTBEAT", self.url)
        return True

    def _on_eof(self):
        self.eof = True

    def close(self, why=None):
        """Close the connection (a warning naming ``why`` when given and a link was open)."""
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if why is not None:
            self.log.logwarn("mavlink_bridge: closing link to %s: %s" % (self.url, why))
        try:
            conn.close()
        except OSError:
            pass

    def send(self, fn):
        """``fn(mav)`` with the connection's pymavlink MAVLink object, under the send lock.
        Returns whether it went out: False without a connection or when the send failed
        (throttled warning)."""
        conn = self.conn
        if conn is None:
            return False
        with self._lock:
            try:
                fn(conn.mav)
                return True
            except OSError as exc:
                self.log.logwarn_throttle(self.warn_period_s, "mavlink_bridge: send failed: %s" % exc)
                return False

    def send_setup_signing(self):
        """Send SETUP_SIGNING with our key to the vehicle (it signs from then on). Returns whether it went out."""
        return self.send(lambda m: mavlink_signing.send_setup_signing(self.conn, self.target[0], self.target[1],
                                                                      self.signing_key))

    def key_vehicle(self, mono):
        """On a signed link with ``signing_setup``: send SETUP_SIGNING, at most every
        :data:`~brov2_hybrid.link.link_state.SETUP_SIGNING_PERIOD_S`. Returns whether it was sent."""
        return self.signing_key is not None and self.signing.setup_due(mono) and self.send_setup_signing()

    def on_unsigned(self, bad_data, mono):
        """A vehicle frame refused by signing (pymavlink's BAD_DATA) at ``mono``: counted; the target
        vehicle talking unsigned is keyed (with ``signing_setup``). Returns the warning to give."""
        sender = mavlink_signing.sender_of(bad_data)
        if self.signing.on_rejected(sender, mono):
            self.send_setup_signing()       # the vehicle talks but is not keyed (yet)
        return ("%d unsigned or wrongly signed messages dropped (last from %s); is the vehicle keyed with key "
                "%s? (~signing_setup keys it)" % (self.signing.rejected, "%d/%d" % sender[:2] if sender else "?",
                                                   mavlink_signing.fingerprint(self.signing_key)))

    def receive(self, timeout_s):
        """The next message (None after ``timeout_s`` without one); OSError when the link failed."""
        return self.conn.recv_match(blocking=True, timeout=timeout_s)
