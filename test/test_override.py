"""RC override (brov2_hybrid.link.override): the check that it reaches the vehicle, and the
gate that serialises override publications with their release."""
import threading
import time

from brov2_hybrid.link import override


# ---------------------------------------------------------------- override verification
def test_verifier_passes_when_motors_move():
    v = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_outputs([1500] * 7 + [1560])
    assert v.update(1.0) == override.VERIFY_OK
    assert v.update(10.0) == override.VERIFY_OK


def test_verifier_fails_when_motors_stay_neutral_and_names_the_fix():
    v = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(5.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_outputs([1500] * 8)
    assert v.update(7.9) == override.VERIFY_PENDING
    assert v.update(8.1) == override.VERIFY_FAILED
    assert "SYSID_MYGCS" in v.failure_message() and "system_id 255" in v.failure_message()


def test_verifier_tells_no_motor_outputs_at_all_from_neutral_ones():
    v = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_outputs([1500] * 8)                       # before the check: does not count for it
    v.on_override(5.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    assert v.update(8.1) == override.VERIFY_FAILED and v.no_outputs()
    msg = v.failure_message("/mavros/rc/out")
    assert msg.startswith("no motor outputs arrived from the vehicle (nothing on /mavros/rc/out)")
    assert "SYSID_MYGCS" not in msg
    v2 = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v2.on_armed(True)
    v2.on_override(5.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v2.on_outputs([1500] * 8)                      # during the check, neutral: the system id
    assert v2.update(8.1) == override.VERIFY_FAILED and not v2.no_outputs()
    assert "SYSID_MYGCS" in v2.failure_message()


def test_verifier_waits_for_a_non_neutral_override_while_armed():
    v = override.OverrideVerifier(timeout_s=1.0, min_deviation_us=20, neutral_us=1500)
    v.on_override(0.0, [1700] * 6 + [65535] * 12)         # disarmed: not counted
    v.on_armed(True)
    v.on_override(0.5, [1510] * 6 + [65535] * 12)         # too close to neutral
    v.on_override(0.6, [0] * 6 + [65535] * 12)            # release: not a command
    assert v.update(100.0) == override.VERIFY_PENDING


def test_verifier_does_not_blame_the_system_id_for_a_lost_link():
    """The link drops 0.1 s after the first override: no verdict while it is down; after
    it returns the check restarts with the next override and can still fail."""
    v = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    v.on_link(False)
    v.on_override(1.0, [1500, 1500, 1500, 1600] + [65535] * 14)   # sent into a dead link
    assert v.update(10.0) == override.VERIFY_PENDING
    v.on_link(True)
    v.on_override(11.0, [1500, 1500, 1500, 1600] + [65535] * 14)
    assert v.update(13.0) == override.VERIFY_PENDING
    assert v.update(14.1) == override.VERIFY_FAILED


def test_verifier_uses_the_given_neutral():
    """With a 1520 us neutral (a vehicle file's thrust_table.pwm_neutral_us), motors at 1520 have not moved
    and an override at 1520 is not a command."""
    v = override.OverrideVerifier(timeout_s=1.0, min_deviation_us=20, neutral_us=1520)
    v.on_armed(True)
    v.on_override(0.0, [1520] * 6 + [65535] * 12)        # neutral for this vehicle: not counted
    v.on_override(0.1, [1500] * 6 + [65535] * 12)        # 20 us below neutral: the check starts
    v.on_outputs([1520] * 8)                              # motors at neutral: not moved
    assert v.update(1.05) == override.VERIFY_PENDING            # counted from 0.1 s, not from 0.0 s
    assert v.update(1.15) == override.VERIFY_FAILED


def test_verifier_restarts_after_a_disarm():
    v = override.OverrideVerifier(timeout_s=3.0, min_deviation_us=20, neutral_us=1500)
    v.on_armed(True)
    v.on_override(0.0, [1600] * 6 + [65535] * 12)
    v.on_armed(False)
    assert v.update(5.0) == override.VERIFY_PENDING


# ---------------------------------------------------------------- override gate
def test_gate_sends_until_released_then_only_the_release():
    gate, log = override.OverrideGate(), []
    assert gate.send(lambda: log.append("active"))
    assert gate.release(lambda: log.append("release"))
    assert not gate.send(lambda: log.append("active"))
    assert not gate.release(lambda: log.append("release"))     # released once
    assert log == ["active", "release"] and gate.released


def test_gate_publication_waiting_for_the_lock_during_a_release_is_dropped():
    """The race of the review: an override is formed while the release (several messages
    with pauses) holds the lock; it must not go out after the release."""
    gate, log = override.OverrideGate(), []
    releasing, finish = threading.Event(), threading.Event()

    def publish_release():
        log.append("release 1")
        releasing.set()
        finish.wait(5.0)
        log.append("release 2")

    releaser = threading.Thread(target=gate.release, args=(publish_release,))
    releaser.start()
    assert releasing.wait(5.0)
    sent = []
    publisher = threading.Thread(target=lambda: sent.append(gate.send(lambda: log.append("active"))))
    publisher.start()
    time.sleep(0.05)                  # the publisher now waits for the lock (or already gave up)
    finish.set()
    releaser.join(5.0)
    publisher.join(5.0)
    assert sent == [False] and log == ["release 1", "release 2"]


def test_gate_publication_in_flight_goes_out_before_the_release():
    gate, log = override.OverrideGate(), []
    publishing, finish = threading.Event(), threading.Event()

    def publish_active():
        publishing.set()
        finish.wait(5.0)
        log.append("active")

    publisher = threading.Thread(target=gate.send, args=(publish_active,))
    publisher.start()
    assert publishing.wait(5.0)
    releaser = threading.Thread(target=gate.release, args=(lambda: log.append("release"),))
    releaser.start()
    time.sleep(0.05)
    assert gate.released and log == []          # flagged at once, sent after the publication in flight
    finish.set()
    publisher.join(5.0)
    releaser.join(5.0)
    assert log == ["active", "release"]
    assert not gate.send(lambda: log.append("active"))
