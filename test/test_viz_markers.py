"""RViz view markers (brov2_hybrid.viz.markers): geometry from the vehicle file, thrust arrows, staleness."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.viz import markers as mk

STYLE = mk.ViewStyle(force_scale_m_per_n=0.01, min_force_n=0.5, valid_pwm_us=(900.0, 2100.0),
                     thruster_radius_m=0.05, thruster_length_m=0.11, body_margin_m=0.07, axes_length_m=0.35,
                     desired_axes_length_m=0.5,
                     arrow_shaft_m=0.02, text_height_m=0.07, text_offset_m=0.55, stale_s=2.0)
SQ = 1.0 / math.sqrt(2.0)


@pytest.fixture(scope="module")
def heavy():
    return load_vehicle("bluerov2_heavy")


def linear_table(pwm_us):
    """An independent stand-in thrust curve: 0.1 N per us from 1500 us."""
    return 0.1 * (pwm_us - 1500.0)


def by_ns(markers, ns):
    return sorted((m for m in markers if m.ns == ns), key=lambda m: m.id)


def test_layout_is_the_vehicle_files_thrusters(heavy):
    layout = mk.layout_from_vehicle(heavy)
    assert layout.count == 8
    np.testing.assert_allclose(layout.positions_m[0], [0.156, 0.111, 0.085])
    np.testing.assert_allclose(layout.positions_m[7], [-0.120, -0.218, 0.0])
    np.testing.assert_allclose(layout.directions[0], [-SQ, SQ, 0.0], atol=1e-12)
    np.testing.assert_allclose(layout.directions[4], [0.0, 0.0, 1.0])
    assert layout.height_m == pytest.approx(0.254)


def test_six_thruster_vehicle_draws_six(heavy):
    layout = mk.layout_from_vehicle(load_vehicle("bluerov2"))
    assert layout.count == 6
    assert len(by_ns(mk.hull_markers(layout, STYLE), "thrusters")) == 6


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=3, max_size=3).filter(
    lambda v: np.linalg.norm(v) > 1e-3))
def test_cylinder_axis_lands_on_the_direction(d):
    q = mk.quaternion_z_to(d)
    expected = np.asarray(d) / np.linalg.norm(d)
    np.testing.assert_allclose(Rotation.from_quat(q).apply([0.0, 0.0, 1.0]), expected, atol=1e-9)
    np.testing.assert_allclose(mk.rotate(q, [0.0, 0.0, 1.0]), expected, atol=1e-9)


def test_cylinder_axis_opposite_z():
    np.testing.assert_allclose(mk.rotate(mk.quaternion_z_to([0.0, 0.0, -2.0]), [0, 0, 1]), [0, 0, -1], atol=1e-12)


def test_hull_markers_put_each_thruster_at_its_position(heavy):
    layout = mk.layout_from_vehicle(heavy)
    markers = mk.hull_markers(layout, STYLE)
    thrusters = by_ns(markers, "thrusters")
    for i, m in enumerate(thrusters):
        assert m.frame == mk.BODY_FRD and m.kind == mk.CYLINDER
        np.testing.assert_allclose(m.position, heavy.thrusters.positions_m[i])
        np.testing.assert_allclose(Rotation.from_quat(m.orientation).apply([0, 0, 1]), heavy.thrusters.directions[i],
                                   atol=1e-9)
    assert [m.text for m in by_ns(markers, "thruster_numbers")] == [str(i) for i in range(1, 9)]
    (hull,) = by_ns(markers, "hull")
    # x extent 2 * 0.156 + margins, y extent 2 * 0.218 + margins, the file's height
    np.testing.assert_allclose(hull.scale, [0.312 + 0.14, 0.436 + 0.14, 0.254])
    np.testing.assert_allclose(hull.position, [0.0, 0.0, 0.0], atol=1e-12)


def test_forces_from_pwms_uses_the_table_and_skips_off_outputs():
    forces = mk.forces_from_pwms([1600, 1400, 0, 1500, 2500], 6, linear_table, (900, 2100))
    np.testing.assert_allclose(forces[:2], [10.0, -10.0])
    assert math.isnan(forces[2]) and forces[3] == 0.0
    assert math.isnan(forces[4]) and math.isnan(forces[5])   # out of range; missing channel


def test_forces_from_pwms_through_the_t200_table(heavy):
    forces = mk.forces_from_pwms([1900, 1100, 1500], 3, heavy.table.force_from_pwm, (900, 2100))
    # data/t200 at 16 V: +5.245 kgf at 1900 us, -4.069 kgf at 1100 us (REFERENCE section 4)
    np.testing.assert_allclose(forces, [5.245 * 9.80665, -4.069 * 9.80665, 0.0], rtol=2e-3)


def test_force_arrows_run_along_the_force_with_scaled_length(heavy):
    layout = mk.layout_from_vehicle(heavy)
    forces = np.array([20.0, -10.0, 0.1, np.nan, 40.0, -40.0, 5.0, 0.0])
    arrows = mk.force_arrows(layout, forces, STYLE)
    assert [m.visible for m in arrows] == [True, True, False, False, True, True, True, False]
    for i in (0, 1, 4, 5, 6):
        start, end = np.array(arrows[i].points[0]), np.array(arrows[i].points[1])
        np.testing.assert_allclose(start, layout.positions_m[i])
        np.testing.assert_allclose(np.linalg.norm(end - start), abs(forces[i]) * 0.01)
        np.testing.assert_allclose((end - start) / np.linalg.norm(end - start),
                                   np.sign(forces[i]) * layout.directions[i], atol=1e-12)
        assert arrows[i].color == (mk.FORWARD_THRUST_RGBA if forces[i] > 0 else mk.REVERSE_THRUST_RGBA)
    # thruster 5 (vertical, d = +z FRD = down) pushing 40 N: the arrow points down by 0.4 m
    np.testing.assert_allclose(arrows[4].points[1], np.array([0.120, 0.218, 0.4]), atol=1e-12)


def test_force_arrows_refuse_a_wrong_count(heavy):
    with pytest.raises(Brov2Error, match=r"forces_n: expected \(8,\)"):
        mk.force_arrows(mk.layout_from_vehicle(heavy), np.zeros(6), STYLE)


def test_make_layout_refuses_bad_geometry():
    with pytest.raises(Brov2Error, match="directions"):
        mk.make_layout([[0, 0, 0]], [[0, 0]], 0.2)
    with pytest.raises(Brov2Error, match="non-zero directions"):
        mk.make_layout([[0, 0, 0]], [[0, 0, 0]], 0.2)
    with pytest.raises(Brov2Error, match="height_m"):
        mk.make_layout([[0, 0, 0]], [[0, 0, 1]], 0.0)


def test_desired_axes_match_the_mavros_convention():
    # yaw 90 deg NED (nose east): in ENU/FLU the body x axis points east = ENU +x
    q = mk.desired_quaternion_enu_flu([0.0, 0.0, math.pi / 2])
    np.testing.assert_allclose(mk.rotate(q, [1, 0, 0]), [1, 0, 0], atol=1e-12)
    # yaw 0 (nose north) -> ENU +y; FLU z stays up
    q = mk.desired_quaternion_enu_flu([0.0, 0.0, 0.0])
    np.testing.assert_allclose(mk.rotate(q, [1, 0, 0]), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(mk.rotate(q, [0, 0, 1]), [0, 0, 1], atol=1e-12)
    # nose up 30 deg: the FLU x axis climbs (ENU z > 0)
    q = mk.desired_quaternion_enu_flu([0.0, math.radians(30), 0.0])
    np.testing.assert_allclose(mk.rotate(q, [1, 0, 0]), [0, math.cos(math.radians(30)), 0.5], atol=1e-12)


def fresh_inputs(now):
    return mk.ViewInputs(pwm_us=(1600,) * 8, pwm_time_s=now, depth_m=5.0, depth_time_s=now,
                         desired_rad=(0.0, 0.0, 0.5), autopilot_mode="ACTIVE", status_time_s=now, mode="MANUAL",
                         armed=True, connected=True, state_time_s=now, firmware="quantitative", firmware_time_s=now)


def test_build_view_with_fresh_inputs(heavy):
    layout = mk.layout_from_vehicle(heavy)
    markers = mk.build_view(layout, fresh_inputs(100.0), STYLE, 100.5, linear_table)
    assert all(m.visible for m in by_ns(markers, "thrust"))
    desired = by_ns(markers, "desired_attitude")
    assert len(desired) == 3 and all(m.visible and m.frame == mk.WORLD for m in desired)
    np.testing.assert_allclose(desired[0].points[0], [0.0, 0.0, -5.0])
    # yaw 0.5 rad NED: the body x axis points north-east-ish, 0.5 m long; ENU (sin, cos, 0)
    np.testing.assert_allclose(np.subtract(desired[0].points[1], desired[0].points[0]),
                               [0.5 * math.sin(0.5), 0.5 * math.cos(0.5), 0.0], atol=1e-12)
    measured = by_ns(markers, "attitude")
    assert [m.frame for m in measured] == [mk.BODY_FLU] * 3
    np.testing.assert_allclose([m.points[1] for m in measured], 0.35 * np.eye(3), atol=1e-12)
    (text,) = by_ns(markers, "status")
    assert text.text.splitlines() == ["depth 5.00 m", "MANUAL, armed", "firmware quantitative", "autopilot ACTIVE"]
    np.testing.assert_allclose(text.position, [0.0, 0.0, -5.0 + 0.55])
    (depth,) = by_ns(markers, "depth")
    assert depth.points == ((0.0, 0.0, -5.0), (0.0, 0.0, 0.0))
    keys = [(m.ns, m.id) for m in markers]
    assert len(keys) == len(set(keys))


def test_build_view_hides_stale_inputs(heavy):
    layout = mk.layout_from_vehicle(heavy)
    markers = mk.build_view(layout, fresh_inputs(100.0), STYLE, 102.5, linear_table)
    assert not any(m.visible for m in by_ns(markers, "thrust"))
    assert not any(m.visible for m in by_ns(markers, "desired_attitude"))
    assert not any(m.visible for m in by_ns(markers, "depth"))
    (text,) = by_ns(markers, "status")
    assert text.text.splitlines() == ["depth: no data", "vehicle state: no data", "firmware: no data",
                                      "autopilot: no data"]
    # the vehicle itself is always drawn
    assert len(by_ns(markers, "thrusters")) == 8 and by_ns(markers, "hull")[0].visible


def test_build_view_without_any_input(heavy):
    markers = mk.build_view(mk.layout_from_vehicle(heavy), mk.ViewInputs(), STYLE, 0.0, linear_table)
    assert by_ns(markers, "status")[0].text.startswith("depth: no data")
    assert not any(m.visible for m in by_ns(markers, "thrust"))


def test_nan_desired_attitude_is_not_drawn(heavy):
    inputs = fresh_inputs(1.0)
    inputs.desired_rad = (math.nan, math.nan, math.nan)
    markers = mk.build_view(mk.layout_from_vehicle(heavy), inputs, STYLE, 1.0, linear_table)
    assert not any(m.visible for m in by_ns(markers, "desired_attitude"))


def test_disconnected_state_text():
    inputs = mk.ViewInputs(mode="", connected=False, state_time_s=0.0)
    assert mk.status_text(inputs, 0.0, 1.0).splitlines()[1] == "mode ?, not connected"


# --- the tether (brov2_hybrid/TetherState of a simulator flying one) ---------------------------

def tethered_inputs(t_s):
    """A vehicle at depth 5 m, body origin at N 10, E 20, D 5 on a 3-node cable from the surface above
    N 0, E 20; the pull 30 N south, 40 N up (NED [-30, 0, -40])."""
    inputs = fresh_inputs(t_s)
    inputs.tether_nodes_ned_m = (0.0, 20.0, 0.0, 5.0, 20.0, 2.5, 10.2, 20.0, 4.9)
    inputs.tether_force_ned_n = (-30.0, 0.0, -40.0)
    inputs.tether_vehicle_ned_m = (10.0, 20.0, 5.0)
    inputs.tether_time_s = t_s
    return inputs


def test_the_tether_is_a_line_through_its_nodes_from_the_drawn_vehicle(heavy):
    """NED offsets from the vehicle's body origin become ENU offsets from the drawn vehicle (the frames
    node puts it at 0, 0, -depth): the attachment point lands beside the vehicle, the base 10 m south of
    it, 5 m up; the pull is an arrow from the attachment point, on the thrust arrows' scale."""
    markers = mk.build_view(mk.layout_from_vehicle(heavy), tethered_inputs(100.0), STYLE, 100.5, linear_table)
    (line,) = by_ns(markers, "tether")
    assert line.visible and line.kind == mk.LINE_STRIP and line.frame == mk.WORLD
    assert line.scale[0] == STYLE.tether_width_m
    np.testing.assert_allclose(line.points, [[0.0, -10.0, 0.0], [0.0, -5.0, -2.5], [0.0, 0.2, -4.9]], atol=1e-12)
    (pull,) = by_ns(markers, "tether_pull")
    assert pull.visible and pull.kind == mk.ARROW and pull.frame == mk.WORLD
    np.testing.assert_allclose(pull.points[0], line.points[-1])
    # 30 N south -> ENU y -0.3 m; 40 N up (NED d -40) -> ENU z +0.4 m; 50 N -> 0.5 m
    np.testing.assert_allclose(np.subtract(pull.points[1], pull.points[0]), [0.0, -0.3, 0.4], atol=1e-12)
    keys = [(m.ns, m.id) for m in markers]
    assert len(keys) == len(set(keys))


def test_the_tether_is_hidden_without_a_fresh_state(heavy):
    layout = mk.layout_from_vehicle(heavy)
    for inputs, now in ((fresh_inputs(100.0), 100.5),              # no tether: never heard
                        (tethered_inputs(100.0), 102.5)):          # stale
        markers = mk.build_view(layout, inputs, STYLE, now, linear_table)
        assert [m.visible for m in by_ns(markers, "tether") + by_ns(markers, "tether_pull")] == [False, False]
    inputs = tethered_inputs(100.0)
    inputs.tether_nodes_ned_m = (math.nan,) * 9
    markers = mk.build_view(layout, inputs, STYLE, 100.5, linear_table)
    assert not by_ns(markers, "tether")[0].visible
    inputs = tethered_inputs(100.0)
    inputs.tether_force_ned_n = (0.1, 0.0, 0.0)                        # a slack cable: no arrow
    markers = mk.build_view(layout, inputs, STYLE, 100.5, linear_table)
    assert by_ns(markers, "tether")[0].visible and not by_ns(markers, "tether_pull")[0].visible
