"""One vehicle, one file: ``params/vehicles/<name>.yaml`` loaded into one :class:`Vehicle`.

The vehicle file holds everything the controller, the output stage, the simulator and
the analysis know about a vehicle (docs/vehicles.md): rigid body, hydrodynamics and
hydrostatics (``body``), thruster positions and directions and the force limit
(``thrusters``), the thrust table (``thrust_table``), the ArduSub frame and its motor
factors (``ardusub``), the DOFs the thrusters cannot actuate (``passive_dofs``) and the
RC channel map (``rc_input``). :func:`load_vehicle` checks every key (a missing key, a
wrong-sized list, a non-physical value or a thruster layout that cannot actuate the DOFs
it claims raises :class:`~brov2_hybrid.errors.ParameterError` naming file and key) and
builds the derived objects once: T, T-dagger, T-hat, the thrust table, tau_max and both
mixers, so every user works with identical objects.

The number of thrusters is whatever the file lists (eight on the Heavy, six on the
standard BlueROV2). Units are in the key names; frames are body FRD / inertial NED;
6-DOF order (surge, sway, heave, roll, pitch, yaw).
"""
import os
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.vehicle import allocation
from brov2_hybrid import params
from brov2_hybrid.link.ardusub import SERVO_OUTPUTS
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.vehicle.mixers import QUANTITATIVE, Mixer
from brov2_hybrid.vehicle.rc import RCMap, load_rc_map
from brov2_hybrid.vehicle.thrust_table import ThrustTable
from brov2_hybrid.dofs import DOF_NAMES

#: Names of the six DOFs, in the order of u, tau and tau_max.
#: ArduSub FRAME_CONFIG values (AP_Motors6DOF.h, sub_frame_t) and their names.
ARDUSUB_FRAMES = {0: "bluerov1", 1: "vectored", 2: "vectored_6dof", 3: "vectored_6dof_90deg",
                  4: "simplerov_3", 5: "simplerov_4", 6: "simplerov_5", 7: "custom"}


@dataclass(frozen=True)
class BodyParams:
    """Rigid-body, hydrodynamic and hydrostatic parameters (body FRD, SI).

    Attributes
    ----------
    mass_kg : float
    weight_n, buoyancy_n : float
        Weight W and buoyancy B of the submerged vehicle [N].
    r_cg_m, r_cb_m : ndarray (3,)
        Centre of gravity / buoyancy from the body origin, FRD [m].
    inertia_kg_m2 : ndarray (3,)
        I_xx, I_yy, I_zz [kg m^2].
    added_mass, linear_drag, quadratic_drag : ndarray (6,)
        Diagonal M_A, B_L, B_NL in 6-DOF order.
    height_m : float
        Height of the vehicle [m] (the simulator's surface buoyancy law).
    tether_attachment_m : ndarray (3,)
        Where the tether pulls on the vehicle, from the body origin, FRD [m] (the simulator's tether).
    """

    mass_kg: float
    weight_n: float
    buoyancy_n: float
    r_cg_m: np.ndarray
    r_cb_m: np.ndarray
    inertia_kg_m2: np.ndarray
    added_mass: np.ndarray
    linear_drag: np.ndarray
    quadratic_drag: np.ndarray
    water_density_kg_m3: float
    gravity_m_s2: float
    height_m: float
    tether_attachment_m: np.ndarray

    @property
    def rigid_body_mass(self):
        """Diagonal of M, shape (6,): [m, m, m, I_xx, I_yy, I_zz]."""
        return np.concatenate([np.full(3, self.mass_kg), self.inertia_kg_m2])

    @property
    def total_mass(self):
        """Diagonal of M + M_A, shape (6,)."""
        return self.rigid_body_mass + self.added_mass


@dataclass(frozen=True)
class ThrusterParams:
    """Thruster layout, the thrust table's location and grid, and the force limit.

    ``positions_m`` / ``directions`` are (n, 3), one row per thruster in ArduSub's motor
    order; directions are unit vectors (normalised on load).
    """

    positions_m: np.ndarray
    directions: np.ndarray
    force_limit_n: object  # float [N], or None to derive it from the table
    csv_file: str
    pwm_min_us: int
    pwm_max_us: int
    pwm_step_us: int
    pwm_neutral_us: int
    pwm_half_range_us: int

    @property
    def count(self):
        """Number of thrusters n."""
        return int(self.positions_m.shape[0])


@dataclass(frozen=True)
class ArduSubFrame:
    """The frame ArduSub mixes for: FRAME_CONFIG and the per-motor factors (n, 6)."""

    frame_config: int
    motor_factors: np.ndarray   # (n, 6): roll, pitch, yaw, throttle, forward, lateral
    fv_coupling_k: float        # MOT_FV_CPLNG_K: the vectored frame's forward/vertical coupling

    @property
    def name(self):
        """ArduSub's name of the frame (FRAME_CONFIG), e.g. ``vectored_6dof``."""
        return ARDUSUB_FRAMES[self.frame_config]


@dataclass
class Vehicle:
    """Everything about one vehicle, from its file (see the module docstring).

    Attributes
    ----------
    name, source : str
        Vehicle name and the file it was loaded from.
    body : BodyParams
    thrusters : ThrusterParams
    frame : ArduSubFrame
    passive_dofs : tuple of int
        DOF indices (0..5) the thrusters cannot actuate: never commanded, left open loop.
    rc_map : brov2_hybrid.vehicle.rc.RCMap
    T : ndarray (6, n)
        Allocation matrix (Eq. 1-4).
    T_pinv : ndarray (n, 6)
        Pseudo-inverse over the actuated DOFs (zero columns for passive DOFs).
    allocator : an allocator of :data:`brov2_hybrid.vehicle.allocation.ALLOCATORS`
        u -> thruster forces, named by the file's ``allocator`` key and built from this
        vehicle (``ALLOCATORS[name](vehicle)``) once everything else is set.
    T_hat : ndarray (6, n)
        ArduSub's heuristic matrix (Eq. 7) from the frame's motor factors.
    table : ThrustTable
    force_limit_n : float
    tau_max : ndarray (6,)
    """

    name: str
    source: str
    body: BodyParams
    thrusters: ThrusterParams
    frame: ArduSubFrame
    passive_dofs: tuple
    rc_map: RCMap
    T: np.ndarray
    T_pinv: np.ndarray
    allocator: object
    T_hat: np.ndarray
    table: ThrustTable
    force_limit_n: float
    tau_max: np.ndarray

    @property
    def n_thrusters(self):
        """Number of thrusters (motor outputs) n."""
        return self.thrusters.count

    @property
    def actuated_dofs(self):
        """DOF indices (0..5) the thrusters actuate, ascending."""
        return tuple(j for j in range(6) if j not in self.passive_dofs)

    @property
    def passive_dof_names(self):
        """Names of the passive DOFs (``DOF_NAMES`` order), e.g. ``("pitch",)``."""
        return tuple(DOF_NAMES[j] for j in self.passive_dofs)

    def wrench_from_pwm(self, pwm_us):
        """Body wrench [N, N m] ((k, 6), or (6,) for one sample) the thrusters give at the motor PWMs
        ``pwm_us`` ((k, n) or (n,) [us]): T @ the thrust table's force of each PWM."""
        return self.table.force_from_pwm(pwm_us) @ self.T.T

    def mixer(self, kind=QUANTITATIVE):
        """Algorithm 2 ('quantitative') or Algorithm 1 ('stock') bound to this vehicle."""
        return Mixer(kind, self.allocator, self.table, self.T_hat, self.frame.frame_config, self.frame.fv_coupling_k)

    def describe(self):
        """One line for logs: name, thrusters, frame and the passive DOFs."""
        passive = ", ".join(self.passive_dof_names) or "none"
        return ("vehicle %s (%s): %d thrusters, ArduSub FRAME_CONFIG %d (%s), passive DOFs: %s"
                % (self.name, self.source, self.n_thrusters, self.frame.frame_config, self.frame.name, passive))


def load_body_params(path, data):
    """:class:`BodyParams` from the ``body`` section."""
    b = params.Section(data, path, "body")
    return BodyParams(
        mass_kg=b.positive("mass_kg"),
        weight_n=b.positive("weight_n"),
        buoyancy_n=b.positive("buoyancy_n"),
        r_cg_m=b.vector("r_cg_m", 3),
        r_cb_m=b.vector("r_cb_m", 3),
        inertia_kg_m2=b.positive_vector("inertia_kg_m2", 3),
        added_mass=b.nonnegative_vector("added_mass", 6),
        linear_drag=b.nonnegative_vector("linear_drag", 6),
        quadratic_drag=b.nonnegative_vector("quadratic_drag", 6),
        water_density_kg_m3=b.positive("water_density_kg_m3"),
        gravity_m_s2=b.positive("gravity_m_s2"),
        height_m=b.positive("height_m"),
        tether_attachment_m=b.vector("tether_attachment_m", 3),
    )


def _thruster_count(section, key):
    rows = section.raw(key)
    if not (isinstance(rows, list) and rows):
        raise ParameterError("%s: expected a list of [x, y, z] rows, one per thruster" % section.key(key))
    if len(rows) > SERVO_OUTPUTS:
        # One motor per servo output: SERVO_OUTPUT_RAW / mavros RCOut carry 8, and so do
        # msg/ThrusterCommand.msg and the log's pwm1..pwm8 columns.
        raise ParameterError("%s: %d thrusters; this package flies at most %d (one per motor output of "
                             "SERVO_OUTPUT_RAW, ThrusterCommand.msg and the log's pwm columns)"
                             % (section.key(key), len(rows), SERVO_OUTPUTS))
    return len(rows)


def load_thruster_params(path, data):
    """:class:`ThrusterParams` from the ``thrusters`` and ``thrust_table`` sections."""
    t = params.Section(data, path, "thrusters")
    n = _thruster_count(t, "positions_m")
    positions = t.matrix("positions_m", (n, 3))
    directions = t.matrix("directions", (n, 3))
    norms = np.linalg.norm(directions, axis=1)
    if np.any(norms < 1e-9):
        raise ParameterError("%s: thruster %d has a zero direction" % (t.key("directions"), int(np.argmin(norms)) + 1))
    limit = t.raw("force_limit_n")
    if limit is not None:
        limit = t.positive("force_limit_n")
    s = params.Section(data, path, "thrust_table")
    csv_file = s.string("csv_file")
    if not os.path.isabs(csv_file):
        csv_file = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), csv_file))
    lo, hi = s.integer("pwm_min_us", 0), s.integer("pwm_max_us", 0)
    neutral = s.integer("pwm_neutral_us", 0)
    if not lo < neutral < hi:
        raise ParameterError("%s:thrust_table: expected pwm_min_us < pwm_neutral_us < pwm_max_us" % path)
    return ThrusterParams(
        positions_m=positions, directions=directions / norms[:, None], force_limit_n=limit,
        csv_file=csv_file, pwm_min_us=lo, pwm_max_us=hi, pwm_step_us=s.integer("pwm_step_us", 1),
        pwm_neutral_us=neutral, pwm_half_range_us=s.integer("pwm_half_range_us", 1))


def load_frame(path, data, n_thrusters):
    """:class:`ArduSubFrame` from the ``ardusub`` section (one factor row per thruster)."""
    a = params.Section(data, path, "ardusub")
    config = a.choice("frame_config", ARDUSUB_FRAMES)        # FRAME_CONFIG
    k = a.number("fv_coupling_k", 0.0, 1.5)                  # MOT_FV_CPLNG_K
    return ArduSubFrame(frame_config=config, motor_factors=a.matrix("motor_factors", (n_thrusters, 6)),
                        fv_coupling_k=k)


def load_passive_dofs(path, data):
    """``passive_dofs``: a list of DOF names -> sorted tuple of DOF indices."""
    top = params.Section(data, path, None)
    names = top.raw("passive_dofs")
    if not (isinstance(names, list) and all(n in DOF_NAMES for n in names) and len(set(names)) == len(names)):
        raise ParameterError("%s: expected a list of distinct DOF names from %s, got %r"
                             % (top.key("passive_dofs"), list(DOF_NAMES), names))
    return tuple(sorted(DOF_NAMES.index(n) for n in names))


def load_vehicle(name_or_path=None):
    """Load the :class:`Vehicle` ``name_or_path`` (default: the BlueROV2 Heavy).

    ``name_or_path``: a vehicle name (``bluerov2_heavy``, ``bluerov2``: a file under
    ``params/vehicles/``) or the path of a vehicle YAML file.
    """
    path = params.vehicle_file(name_or_path)
    data = params.load_yaml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ParameterError("%s:name: expected the vehicle's name" % path)
    body = load_body_params(path, data)
    thrusters = load_thruster_params(path, data)
    frame = load_frame(path, data, thrusters.count)
    passive = load_passive_dofs(path, data)
    T = allocation.allocation_matrix(thrusters.positions_m, thrusters.directions)
    try:
        T_pinv = allocation.pseudo_inverse(T, passive)
    except Brov2Error as exc:
        raise ParameterError("%s:passive_dofs: the thrusters (thrusters.positions_m / directions) cannot "
                             "actuate every DOF not listed as passive: %s" % (path, exc))
    table = ThrustTable.from_params(thrusters)
    limit = thrusters.force_limit_n if thrusters.force_limit_n is not None else table.symmetric_limit_n
    try:
        tau_max = allocation.tau_max_from_limit(T, thrusters.directions, limit, passive)
    except Brov2Error as exc:
        raise ParameterError("%s:thrusters: %s" % (path, exc))
    allocator_name = params.Section(data, path, None).choice("allocator", allocation.ALLOCATORS)
    vehicle = Vehicle(
        name=name, source=path, body=body, thrusters=thrusters, frame=frame, passive_dofs=passive,
        rc_map=load_rc_map(path), T=T, T_pinv=T_pinv, allocator=None, T_hat=allocation.heuristic_matrix(frame.motor_factors),
        table=table, force_limit_n=float(limit), tau_max=tau_max)
    vehicle.allocator = allocation.make_allocator(allocator_name, vehicle)   # an allocator sees the whole vehicle
    return vehicle


def add_vehicle_argument(parser, help_suffix=""):
    """Add ``--vehicle NAME_OR_PATH`` to an argparse parser (default: the Heavy)."""
    parser.add_argument("--vehicle", default=params.DEFAULT_VEHICLE, metavar="NAME_OR_PATH",
                        help="vehicle file: a name under params/vehicles/ (%s) or a YAML path (default %s)%s"
                        % (", ".join(params.available_vehicles()), params.DEFAULT_VEHICLE, help_suffix))
