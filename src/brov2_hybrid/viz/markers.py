"""Marker descriptions of the RViz view: the vehicle, its thruster forces, two attitudes, depth, mode, tether.

Everything is built from the vehicle file at run time (thruster positions r_i and unit
directions d_i, body FRD, from the centre of mass; paper Sec. 2.2.1) and from what the
vehicle and the autopilot publish: motor PWMs (-> thrust through the T200 table), the
desired attitude eta_2d, the depth and the mode; on a simulated tether, the simulator's
brov2_hybrid/TetherState (the cable's nodes and its pull on the vehicle, NED).

Frames are named by role; ``nodes/rviz_view`` maps them to TF frame ids:

* ``BODY_FRD``: the vehicle's body FRD frame (``base_link_frd``), where the vehicle file's
  positions and directions hold as they are;
* ``BODY_FLU``: the body frame of REP-103 (``base_link``), oriented by the measured attitude;
* ``WORLD``: the ENU world frame (``odom``), where the frames node puts the vehicle at
  z = -depth.

Lengths [m], forces [N], times [s], quaternions (x, y, z, w) as in
:mod:`brov2_hybrid.physics.kinematics`. A force arrow runs from r_i along the force the
thruster puts on the vehicle, f_i d_i, scaled by ``force_scale_m_per_n``. Properties
(tested): a cylinder's axis (its local z) lands on d_i; an arrow's length is
|f_i| * scale; inputs older than ``stale_s`` are not drawn and the text says so. The tether
is drawn from the vehicle (:func:`tether_markers`): the frames node places the vehicle by its depth
alone, so the cable's nodes are placed at their offset from the vehicle's body origin, and its
last node (the attachment point) lands on the drawn vehicle; its pull is an arrow from there,
on the thrust arrows' scale.
"""
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.physics.kinematics import (quaternion_from_euler, quaternion_multiply,
                                             quaternion_ned_frd_to_enu_flu)
from brov2_hybrid.validate import as_matrix, as_number, as_positive, as_vector

BODY_FRD, BODY_FLU, WORLD = "body_frd", "body_flu", "world"
CUBE, CYLINDER, ARROW, TEXT, LINE_LIST, LINE_STRIP = "cube", "cylinder", "arrow", "text", "line_list", "line_strip"

# Colours (r, g, b, a) in [0, 1]: presentation only, no physics.
HULL_RGBA = (0.25, 0.45, 0.75, 0.55)
THRUSTER_RGBA = (0.15, 0.15, 0.15, 1.0)
LABEL_RGBA = (1.0, 1.0, 1.0, 1.0)
FORWARD_THRUST_RGBA = (1.0, 0.55, 0.0, 1.0)   # force along +d_i
REVERSE_THRUST_RGBA = (0.0, 0.85, 0.85, 1.0)  # force along -d_i
AXIS_RGB = ((0.9, 0.1, 0.1), (0.1, 0.8, 0.1), (0.15, 0.3, 1.0))   # x, y, z
DESIRED_ALPHA = 0.45
DEPTH_LINE_RGBA = (0.6, 0.8, 1.0, 0.8)
TEXT_RGBA = (1.0, 1.0, 1.0, 1.0)
TETHER_RGBA = (1.0, 0.85, 0.1, 1.0)
TETHER_PULL_RGBA = (0.95, 0.15, 0.15, 1.0)
IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Marker:
    """One marker: what ``visualization_msgs/Marker`` needs, by role instead of frame id.

    ``visible`` False means "remove this marker" (DELETE); ``points`` are used by arrows
    (start, end) and line lists; ``scale`` follows RViz's meaning per kind (arrow: shaft
    diameter, head diameter, head length).
    """

    ns: str
    id: int
    kind: str
    frame: str
    position: Tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: Tuple[float, float, float, float] = IDENTITY_Q
    scale: Tuple[float, float, float] = (1.0, 1.0, 1.0)
    color: Tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    points: tuple = ()
    text: str = ""
    visible: bool = True


@dataclass(frozen=True)
class ThrusterLayout:
    """The thrusters of the vehicle file: positions_m, directions (n, 3) body FRD; height_m of the hull."""

    positions_m: np.ndarray
    directions: np.ndarray
    height_m: float

    @property
    def count(self):
        """Number of thrusters n."""
        return int(self.positions_m.shape[0])


@dataclass(frozen=True)
class ViewStyle:
    """Sizes and limits of the view (params/autopilot.yaml, section rviz_view)."""

    force_scale_m_per_n: float      # arrow length per newton of thrust
    min_force_n: float              # smaller |force| draws no arrow
    valid_pwm_us: Tuple[float, float]   # motor PWMs outside are "no output" (e.g. 0 while disarmed)
    thruster_radius_m: float
    thruster_length_m: float
    body_margin_m: float            # hull box beyond the outermost thrusters
    axes_length_m: float            # measured attitude axes
    desired_axes_length_m: float    # desired attitude axes (longer: visible where they overlap the measured)
    arrow_shaft_m: float            # shaft diameter of every arrow
    text_height_m: float
    text_offset_m: float            # text above the vehicle
    stale_s: float                  # inputs older than this are not drawn
    tether_width_m: float = 0.02    # line width of the tether


@dataclass
class ViewInputs:
    """The latest of every input and when it arrived (``*_time_s``, any monotonic clock; None: never).

    desired_rad: (roll, pitch, yaw) NED/FRD as on AutopilotStatus.desired_rad.
    """

    pwm_us: Optional[tuple] = None
    pwm_time_s: Optional[float] = None
    depth_m: Optional[float] = None
    depth_time_s: Optional[float] = None
    desired_rad: Optional[tuple] = None
    autopilot_mode: str = ""
    status_time_s: Optional[float] = None
    mode: str = ""
    armed: bool = False
    connected: bool = False
    state_time_s: Optional[float] = None
    firmware: str = ""
    firmware_time_s: Optional[float] = None
    tether_nodes_ned_m: Optional[tuple] = None      # TetherState.nodes_ned_m: n0 e0 d0 n1 ... (base first)
    tether_force_ned_n: Optional[tuple] = None      # TetherState.force_ned_n: the pull on the vehicle
    tether_vehicle_ned_m: Optional[tuple] = None    # TetherState.vehicle_ned_m: the vehicle's body origin
    tether_time_s: Optional[float] = None


def layout_from_vehicle(vehicle):
    """:class:`ThrusterLayout` of a loaded :class:`~brov2_hybrid.vehicle.vehicle_file.Vehicle`."""
    return make_layout(vehicle.thrusters.positions_m, vehicle.thrusters.directions, vehicle.body.height_m)


def make_layout(positions_m, directions, height_m):
    """Checked :class:`ThrusterLayout`: (n, 3) positions [m] and directions (normalised here), hull height [m]."""
    positions = np.asarray(positions_m, dtype=float)
    n = positions.shape[0] if positions.ndim == 2 else 0
    positions = as_matrix(positions, (n, 3), "positions_m")
    dirs = as_matrix(directions, (n, 3), "directions")
    norms = np.linalg.norm(dirs, axis=1)
    if n == 0 or np.any(norms < 1e-9):
        raise Brov2Error("thruster layout: expected at least one thruster and non-zero directions")
    return ThrusterLayout(positions, dirs / norms[:, None], as_positive(height_m, "height_m"))


def rotate(q, v):
    """Vector v (3,) rotated by the unit quaternion q (x, y, z, w): q v q*."""
    qv = np.append(as_vector(v, 3, "v"), 0.0)
    q = as_vector(q, 4, "q")
    q_conj = np.array([-q[0], -q[1], -q[2], q[3]])
    return quaternion_multiply(quaternion_multiply(q, qv), q_conj)[:3]


def quaternion_z_to(direction):
    """Unit quaternion that turns +z onto the unit vector of ``direction`` (3,) (a cylinder's axis)."""
    d = as_vector(direction, 3, "direction")
    d = d / np.linalg.norm(d)
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ d)
    if c < -1.0 + 1e-12:                      # opposite: half a turn about x
        return np.array([1.0, 0.0, 0.0, 0.0])
    axis = np.cross(z, d)
    q = np.append(axis, 1.0 + c)               # half-angle form, normalised below
    return q / np.linalg.norm(q)


def hull_box(layout, margin_m):
    """Centre and size (3,) [m] of the hull box, body FRD: the thrusters' x-y extent plus margin_m, the hull height."""
    lo, hi = layout.positions_m.min(axis=0), layout.positions_m.max(axis=0)
    centre = np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.0])
    size = np.array([hi[0] - lo[0] + 2.0 * margin_m, hi[1] - lo[1] + 2.0 * margin_m, layout.height_m])
    return centre, size


def hull_markers(layout, style):
    """The vehicle: a hull box, a cylinder per thruster along d_i, and the thruster numbers (1..n)."""
    centre, size = hull_box(layout, style.body_margin_m)
    markers = [Marker("hull", 0, CUBE, BODY_FRD, tuple(centre), IDENTITY_Q, tuple(size), HULL_RGBA)]
    diameter = 2.0 * style.thruster_radius_m
    for i in range(layout.count):
        r = layout.positions_m[i]
        markers.append(Marker("thrusters", i, CYLINDER, BODY_FRD, tuple(r), tuple(quaternion_z_to(layout.directions[i])),
                              (diameter, diameter, style.thruster_length_m), THRUSTER_RGBA))
        label = r + np.array([0.0, 0.0, -(style.thruster_radius_m + style.text_height_m)])   # above (FRD: -z is up)
        markers.append(Marker("thruster_numbers", i, TEXT, BODY_FRD, tuple(label), scale=(0.0, 0.0, style.text_height_m),
                              color=LABEL_RGBA, text=str(i + 1)))
    return markers


def forces_from_pwms(pwm_us, n, force_from_pwm, valid_pwm_us):
    """Thrust [N] (n,) of the first n motor PWMs [us] through ``force_from_pwm`` (the T200 table).

    A PWM outside ``valid_pwm_us`` (e.g. 0: the output is off) or missing gives NaN: no
    thrust is known for it, and none is drawn.
    """
    lo, hi = valid_pwm_us
    forces = np.full(n, np.nan)
    for i, pwm in enumerate(list(pwm_us or ())[:n]):
        if lo <= pwm <= hi:
            forces[i] = float(force_from_pwm(float(pwm)))
    return forces


def _arrow_scale(style):
    return (style.arrow_shaft_m, 2.0 * style.arrow_shaft_m, 3.0 * style.arrow_shaft_m)


def force_arrows(layout, forces_n, style):
    """One arrow per thruster from r_i to r_i + scale f_i d_i (body FRD); hidden for NaN or |f_i| < min_force_n."""
    forces = np.asarray(forces_n, dtype=float)
    if forces.shape != (layout.count,):
        raise Brov2Error("forces_n: expected (%d,), got %s" % (layout.count, forces.shape))
    markers = []
    for i in range(layout.count):
        f = forces[i]
        if not math.isfinite(f) or abs(f) < style.min_force_n:
            markers.append(Marker("thrust", i, ARROW, BODY_FRD, visible=False))
            continue
        start = layout.positions_m[i]
        end = start + style.force_scale_m_per_n * f * layout.directions[i]
        color = FORWARD_THRUST_RGBA if f > 0.0 else REVERSE_THRUST_RGBA
        markers.append(Marker("thrust", i, ARROW, BODY_FRD, scale=_arrow_scale(style), color=color,
                              points=(tuple(start), tuple(end))))
    return markers


def axes_markers(ns, frame, origin, q, length_m, style, alpha=1.0):
    """Three arrows x (red), y (green), z (blue) of ``length_m`` from ``origin``, turned by q, in ``frame``."""
    origin = as_vector(origin, 3, "origin")
    markers = []
    for k in range(3):
        end = origin + length_m * rotate(q, np.eye(3)[k])
        markers.append(Marker(ns, k, ARROW, frame, scale=_arrow_scale(style), color=AXIS_RGB[k] + (alpha,),
                              points=(tuple(origin), tuple(end))))
    return markers


def hidden(ns, count, kind, frame):
    """``count`` markers of ``ns`` to remove (an input went stale)."""
    return [Marker(ns, k, kind, frame, visible=False) for k in range(count)]


def desired_quaternion_enu_flu(desired_rad):
    """Desired attitude eta_2d (roll, pitch, yaw) NED/FRD [rad] -> orientation of body FLU in ENU (as odom -> base_link)."""
    return quaternion_ned_frd_to_enu_flu(quaternion_from_euler(desired_rad))


def fresh(time_s, now_s, stale_s):
    """True when an input that arrived at ``time_s`` (None: never) is at most ``stale_s`` old at ``now_s``."""
    return time_s is not None and now_s - time_s <= stale_s


def status_text(inputs, now_s, stale_s):
    """The text beside the vehicle: depth, ArduSub mode and arming, firmware, the autopilot's mode.

    A missing or stale input reads "no data" rather than its last value.
    """
    lines = []
    if fresh(inputs.depth_time_s, now_s, stale_s) and inputs.depth_m is not None:
        lines.append("depth %.2f m" % inputs.depth_m)
    else:
        lines.append("depth: no data")
    if fresh(inputs.state_time_s, now_s, stale_s):
        link = ("armed" if inputs.armed else "disarmed") if inputs.connected else "not connected"
        lines.append("%s, %s" % (inputs.mode or "mode ?", link))
    else:
        lines.append("vehicle state: no data")
    if fresh(inputs.firmware_time_s, now_s, stale_s) and inputs.firmware:
        lines.append("firmware %s" % inputs.firmware)
    else:
        lines.append("firmware: no data")
    if fresh(inputs.status_time_s, now_s, stale_s) and inputs.autopilot_mode:
        lines.append("autopilot %s" % inputs.autopilot_mode)
    else:
        lines.append("autopilot: no data")
    return "\n".join(lines)


def ned_offsets_to_enu(points_ned_m, origin_ned_m):
    """NED points (k, 3) [m] as ENU offsets (k, 3) from ``origin_ned_m`` (3,): (east, north, up)."""
    d = np.asarray(points_ned_m, dtype=float).reshape(-1, 3) - as_vector(origin_ned_m, 3, "origin_ned_m")
    return np.column_stack([d[:, 1], d[:, 0], -d[:, 2]])


def tether_markers(inputs, style, now_s, vehicle_at):
    """The tether as a line through its nodes and its pull as an arrow from the attachment point, in
    ``WORLD`` around the drawn vehicle at ``vehicle_at`` (3,) (ENU); hidden without a fresh, finite
    TetherState, the arrow also below ``min_force_n``."""
    nodes, force, vehicle = inputs.tether_nodes_ned_m, inputs.tether_force_ned_n, inputs.tether_vehicle_ned_m
    known = fresh(inputs.tether_time_s, now_s, style.stale_s) and nodes is not None and force is not None \
        and vehicle is not None and len(nodes) >= 6 and len(nodes) % 3 == 0 \
        and np.all(np.isfinite(nodes)) and np.all(np.isfinite(force)) and np.all(np.isfinite(vehicle))
    if not known:
        return hidden("tether", 1, LINE_STRIP, WORLD) + hidden("tether_pull", 1, ARROW, WORLD)
    points = np.asarray(vehicle_at, dtype=float) + ned_offsets_to_enu(nodes, vehicle)
    out = [Marker("tether", 0, LINE_STRIP, WORLD, scale=(style.tether_width_m, 0.0, 0.0), color=TETHER_RGBA,
                  points=tuple(tuple(p) for p in points))]
    pull = ned_offsets_to_enu(force, np.zeros(3))[0]
    if np.linalg.norm(pull) < style.min_force_n:
        return out + hidden("tether_pull", 1, ARROW, WORLD)
    end = points[-1] + style.force_scale_m_per_n * pull
    return out + [Marker("tether_pull", 0, ARROW, WORLD, scale=_arrow_scale(style), color=TETHER_PULL_RGBA,
                         points=(tuple(points[-1]), tuple(end)))]


def build_view(layout, inputs, style, now_s, force_from_pwm):
    """Every marker of the view at ``now_s`` (the clock of ``inputs``' times).

    The vehicle and its measured attitude axes (``BODY_FLU``, placed by TF) always; thrust
    arrows from fresh motor PWMs; the desired attitude axes at the vehicle's position
    (``WORLD``, z = -depth) from a fresh, finite eta_2d; a line from the vehicle up to the
    surface; the status text above the vehicle; the tether and its pull from a fresh TetherState.
    """
    now_s = as_number(now_s, "now_s")
    markers = hull_markers(layout, style)
    markers += axes_markers("attitude", BODY_FLU, np.zeros(3), IDENTITY_Q, style.axes_length_m, style)
    pwm_fresh = fresh(inputs.pwm_time_s, now_s, style.stale_s)
    forces = (forces_from_pwms(inputs.pwm_us, layout.count, force_from_pwm, style.valid_pwm_us) if pwm_fresh
              else np.full(layout.count, np.nan))
    markers += force_arrows(layout, forces, style)
    depth_known = fresh(inputs.depth_time_s, now_s, style.stale_s) and inputs.depth_m is not None \
        and math.isfinite(inputs.depth_m)
    vehicle_at = np.array([0.0, 0.0, -inputs.depth_m if depth_known else 0.0])
    desired = inputs.desired_rad
    if fresh(inputs.status_time_s, now_s, style.stale_s) and desired is not None and np.all(np.isfinite(desired)):
        markers += axes_markers("desired_attitude", WORLD, vehicle_at, desired_quaternion_enu_flu(desired),
                                style.desired_axes_length_m, style, alpha=DESIRED_ALPHA)
    else:
        markers += hidden("desired_attitude", 3, ARROW, WORLD)
    if depth_known:
        markers.append(Marker("depth", 0, LINE_LIST, WORLD, scale=(0.5 * style.arrow_shaft_m, 0.0, 0.0),
                              color=DEPTH_LINE_RGBA, points=(tuple(vehicle_at), (0.0, 0.0, 0.0))))
    else:
        markers += hidden("depth", 1, LINE_LIST, WORLD)
    markers += tether_markers(inputs, style, now_s, vehicle_at)
    text_at = vehicle_at + np.array([0.0, 0.0, style.text_offset_m])
    markers.append(Marker("status", 0, TEXT, WORLD, tuple(text_at), scale=(0.0, 0.0, style.text_height_m),
                          color=TEXT_RGBA, text=status_text(inputs, now_s, style.stale_s)))
    return markers
