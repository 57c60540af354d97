"""The mission's checks against a scripted vehicle (scripted_fcu.py): an arming that never takes
effect, an ignored override, telemetry that never arrives, the firmware, a disarmed vehicle, the
end of the run; its settings, exit codes and exit-code file.
"""
import pytest
from brov2_hybrid.mission import exit_codes as ec
from brov2_hybrid.mission import sequence as ms
from brov2_hybrid.mission import interfaces as mio
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.vehicle.firmware_detector import FirmwareDetector
from brov2_hybrid.vehicle.firmware_output import FIRMWARE_CHOICES
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params
from brov2_hybrid.link.override import OverrideVerifier

from scripted_fcu import make_mission, mission_settings, rc_map  # noqa: F401  (fixtures)


def test_arming_that_never_takes_effect_stops_the_run(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(arm_timeout_s=8.0), arm_takes_effect=False)
    assert mission.run() == ec.EXIT_NO_VEHICLE
    # each attempt waits command_timeout_s (5 s) for the armed state: two fit in 8 s
    assert io.texts(mio.WARN)[-1] == ("arming attempt 2 failed (accepted, but /mavros/state did not report "
                                     "armed within 5.0 s)")
    assert io.texts(mio.FATAL) == ["the vehicle did not arm within 8 s (2 attempts)"]
    assert io.published("engaged", "release") == []


def test_override_ignored_names_the_system_id_and_disarms(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, firmware="ignores")
    assert mission.run() == ec.EXIT_OVERRIDE_IGNORED
    fatal, = io.texts(mio.FATAL)
    assert "SYSID_MYGCS = 255" in fatal and "system_id 255" in fatal
    # the 3 s verification runs from the first override, before the 6 s firmware timeout
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 3.0, abs=3 * ms.POLL_S)
    assert io.published("engaged", "release") == [("release", True), ("engaged", False)]
    assert io.events[-2][1:] == ("arm", False)


@pytest.mark.parametrize("sends, silent", [((), "no attitude (/mavros/imu/data"),
                                           (("attitude",), "no motor outputs (/mavros/rc/out"),
                                           (("outputs",), "no attitude (/mavros/imu/data")])
def test_telemetry_that_never_arrives_is_told_as_such_not_as_an_ignored_override(vehicle, rc_map, sends, silent):
    mission, io = make_mission(vehicle, rc_map, mission_settings(telemetry_timeout_s=2.0), sends=sends)
    assert mission.run() == ec.EXIT_NO_TELEMETRY
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("no telemetry: " + silent) and "SYSID_MYGCS" not in fatal
    assert "mavros_streams" in fatal
    # counted from armed (0.1 s after the request), before the 3 s override check could fail
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 2.0, abs=3 * ms.POLL_S)
    assert io.events[-2][1:] == ("arm", False)


def test_the_no_telemetry_wait_counts_armed_and_connected_time_without_a_break(vehicle, rc_map):
    settings = mission_settings(telemetry_timeout_s=2.0)

    class Quiet(mio.MissionIO):
        def now_s(self):
            return 0.0

        def log(self, level, text):
            self.said = (level, text)

    io = Quiet()
    m = ms.Mission(settings, OverrideVerifier(3.0, 20, 1500), FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0), io)
    m.on_state(True, True, "MANUAL")
    assert m.check_telemetry(0.0) is None          # the wait starts
    assert m.check_telemetry(1.5) is None
    m.on_state(False, True, "MANUAL")              # link lost: the wait restarts when it is back
    assert m.check_telemetry(2.5) is None
    m.on_state(True, True, "MANUAL")
    assert m.check_telemetry(3.0) is None and m.check_telemetry(4.9) is None
    m.on_attitude()                                # heard once: heard for good
    m.on_outputs([1500] * 8)
    assert m.check_telemetry(5.1) is None
    m2 = ms.Mission(settings, OverrideVerifier(3.0, 20, 1500), FirmwareDetector(vehicle, rc_map, 3.0, 3, 1.0),
                    Quiet())
    m2.on_state(True, True, "MANUAL")
    m2.on_attitude()
    m2.check_telemetry(0.0)
    assert m2.check_telemetry(2.1) == ec.EXIT_NO_TELEMETRY
    assert m2.io.said[1].startswith("no telemetry: no motor outputs (/mavros/rc/out: SERVO_OUTPUT_RAW) arrived "
                                    "from the vehicle in 2.1 s armed and connected")


def test_streams_that_arrive_pass_the_telemetry_check(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(telemetry_timeout_s=2.0))
    assert mission.run() == ec.EXIT_OK and io.texts(mio.FATAL) == []


def test_an_override_check_without_any_motor_output_says_no_telemetry(vehicle, rc_map):
    # the telemetry check off: the override check itself tells "nothing arrived" from "stayed neutral"
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), sends=("attitude",))
    assert mission.run() == ec.EXIT_NO_TELEMETRY
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("no motor outputs arrived from the vehicle (nothing on /mavros/rc/out) during the "
                            "3.0 s override check") and "SYSID_MYGCS" not in fatal


def test_configured_firmware_the_vehicle_does_not_run(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="quantitative"), firmware="stock")
    assert mission.run() == ec.EXIT_FIRMWARE
    fatal, = io.texts(mio.FATAL)
    assert "parameter 'firmware' is 'quantitative'" in fatal and "firmware:=stock" in fatal
    assert io.published("firmware") == []                    # a wrong firmware is never latched
    assert io.published("engaged", "release")[-2:] == [("release", True), ("engaged", False)]


def test_auto_without_a_verdict_times_out(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, firmware="unknown")
    assert mission.run() == ec.EXIT_FIRMWARE
    fatal, = io.texts(mio.FATAL)
    assert fatal.startswith("parameter 'firmware' is auto but the vehicle's motor outputs (/mavros/rc/out) "
                            "matched neither") and "set firmware:=stock or firmware:=quantitative" in fatal
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 6.0, abs=3 * ms.POLL_S)
    assert "RC override reaches the vehicle (motor outputs follow it)" in io.texts(mio.INFO)
    assert ("engaged", True) not in io.published("engaged")


def test_the_firmware_timeout_counts_the_vehicles_clock_not_the_wall(vehicle, rc_map):
    """A busy machine slows a lockstep SITL's clock (here to half the wall's rate): the firmware check's
    6 s run on the vehicle's clock, so the run stops 12 s of wall after arming, not 6 (timed on the
    wall clock it would stop after 6 s with half the output samples a quiet machine sees)."""
    mission, io = make_mission(vehicle, rc_map, firmware="unknown", vehicle_clock_rate=0.5)
    assert mission.run() == ec.EXIT_FIRMWARE
    assert io.time_of("release", True) - io.time_of("arm", True) == pytest.approx(0.1 + 12.0, abs=3 * ms.POLL_S)


@pytest.mark.parametrize("min_samples", [20, 1])
def test_a_mission_starved_of_motor_outputs_waits_for_enough_samples_before_giving_up(vehicle, rc_map, min_samples):
    """A lockstep simulator at 10x real time, the mission node starved by a busy machine: its vehicle clock
    runs 10x the wall's while it handles one motor-output sample in 40. The 6 s of the vehicle's clock pass
    with 3 samples seen; firmware_min_samples lets the run wait for the evidence, which tells the firmware.
    Timed on the vehicle's clock alone (min_samples 1) the run stops with the firmware not yet told."""
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware_min_samples=min_samples),
                               firmware="quantitative", vehicle_clock_rate=10.0, outputs_every=40)
    if min_samples == 1:
        assert mission.run() == ec.EXIT_FIRMWARE
        assert "matched neither" in io.texts(mio.FATAL)[0]
        return
    assert mission.run() == ec.EXIT_OK, io.texts(mio.FATAL)
    assert io.published("firmware") == [("firmware", "quantitative")]
    assert mission.detector.judged < min_samples             # told long before the samples would have timed out


def test_a_disarmed_vehicle_is_reported_every_5_s(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock", dive_s=30.0,
                           disarm_at_s=5.0)
    io.shutdown_at_s = 17.0
    assert mission.run() == ec.EXIT_SHUTDOWN                            # stopped before the dive ended
    assert io.texts(mio.WARN)[:3] == ["the vehicle is not armed"] * 3    # at 5, 10 and 15 s


def test_failed_disarm_at_the_end_says_to_disarm_by_hand(vehicle, rc_map):
    mission, io = make_mission(vehicle, rc_map, mission_settings(firmware="stock"), firmware="stock", dive_s=1.0)
    io.arm_replies = [mio.CommandReply(True, 0), mio.CommandReply(False, 4)]
    assert mission.run() == ec.EXIT_OK
    assert io.texts(mio.ERROR) == ["disarm failed; disarm the vehicle by hand"]


# ---------------------------------------------------------------- settings
def test_settings_from_autopilot_yaml():
    p = ParamReader(load_node_params("mission"), "mission")
    s = mio.MissionSettings.from_params(p, FIRMWARE_CHOICES)
    assert (s.mode, s.connect_timeout_s, s.arm_timeout_s, s.firmware) == (
        p.values["mode"], p.values["connect_timeout_s"], p.values["arm_timeout_s"], p.values["firmware"])
    with pytest.raises(ParameterError, match=r"mission ~firmware: expected one of \['auto', 'quantitative', 'stock'\]"):
        mio.MissionSettings.from_params(ParamReader(load_node_params("mission", {"firmware": "px4"}), "mission"),
                                       FIRMWARE_CHOICES)
    with pytest.raises(ParameterError, match=r"mission ~arm_timeout_s: expected"):
        mio.MissionSettings.from_params(ParamReader(load_node_params("mission", {"arm_timeout_s": 0}), "mission"),
                                       FIRMWARE_CHOICES)


# ---------------------------------------------------------------- the exit code for make run
def test_exit_code_file_round_trip(tmp_path):
    path = str(tmp_path / "mission_exit_code")
    assert ec.read_exit_code(path) is None                  # no file: no code
    ec.write_exit_code(path, ec.EXIT_FIRMWARE)
    assert open(path).read() == "5\n" and ec.read_exit_code(path) == 5
    ec.write_exit_code(path, ec.EXIT_OK)                     # replaced, not appended
    assert ec.read_exit_code(path) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["mission_exit_code"]   # no temporary left
    ec.write_exit_code("", 3)                                # "" = nowhere
    (tmp_path / "junk").write_text("five")
    assert ec.read_exit_code(str(tmp_path / "junk")) is None


def test_every_exit_code_has_a_meaning():
    codes = {ec.EXIT_OK, ec.EXIT_CONFIG, ec.EXIT_NO_VEHICLE, ec.EXIT_OVERRIDE_IGNORED, ec.EXIT_FIRMWARE,
             ec.EXIT_NO_TELEMETRY, ec.EXIT_NODE_DIED, ec.EXIT_SHUTDOWN}
    assert set(ec.EXIT_MEANINGS) == codes and len(codes) == 8


def test_a_dead_required_node_is_read_from_roslaunch_output():
    # as roslaunch 1.15's process monitor prints it (roslaunch/pmon.py, Process.get_exit_description)
    text = ("[mission-9] ...\n================================================================================"
            "REQUIRED process [mavros-3] has died!\nprocess has died [pid 4242, exit code -9, cmd "
            "/root/ws/devel/lib/mavros/mavros_node __name:=mavros].\nlog file: /root/.ros/log/x/mavros-3*.log\n"
            "Initiating shutdown!\n")
    assert ec.required_node_died(text) == ("mavros", -9)
    assert ec.required_node_died("REQUIRED process [csv_reader-7] has died!\nprocess has finished cleanly\n"
                                 "process has died [pid 5, exit code 1, cmd x].") == ("csv_reader", 1)
    assert ec.required_node_died("[mavros-3] process has died [pid 4242, exit code -9, cmd x]") is None
