"""Output stage: normalized command u -> the RC channel values for the firmware on the vehicle.

The paper's gains assume its modified ArduSub (Algorithm 2, ``mixers.Mixer('quantitative')``):
the firmware turns the pilot input u into thruster forces m = T-dagger diag(tau_max) u
and each force into a PWM through the T200 table, jumping the dead band. Real BlueROV2
Heavies run stock ArduSub (Algorithm 1, ``mixers.mix_stock``), whose chain is linear:

* ``RC_Channel::norm_input`` (libraries/RC_Channel/RC_Channel.cpp): channel PWM ->
  (PWM - trim) / (max - trim), 1100/1500/1900 by default, 1 us steps -> u steps of 1/400;
* ``ModeManual::run`` (ArduSub/mode_manual.cpp): roll, pitch, throttle, forward, lateral
  pass straight to the motors library, yaw times ACRO_YAW_P / its default (1);
* ``AP_Motors6DOF::output_armed_stabilizing_vectored_6dof`` (libraries/AP_Motors/
  AP_Motors6DOF.cpp): the vertical group (roll, pitch, throttle) and the horizontal group
  (yaw, forward, lateral) are each mixed with the frame factors and divided by
  max(1, max |.|) of the group, then added and constrained to [-1, 1];
* ``AP_Motors6DOF::output_to_motors`` / ``calc_thrust_to_pwm``: PWM = 1500 + 400 m, linear.

So stock firmware puts small forces inside the T200 dead band (u_yaw = 0.05 gives 1520 us
on the horizontal thrusters: no thrust). The stock-compensated stage below asks stock
ArduSub for the motor PWMs Algorithm 2 would give: it takes Algorithm 2's target m*
(dead band included) and per thruster group finds the RC input u' whose Algorithm 1 mix
reproduces m* best (least squares; the group's frame factors are orthogonal +-1 columns),
scales it so Algorithm 1 never rescales, and picks the best of the neighbouring 1 us
channel quantizations by the wrench it delivers through the thrust table. Nothing has
to be flashed on the vehicle.

Stages (:data:`OUTPUT_STAGES`, by name):

* ``quantitative`` -- the vehicle runs Algorithm 2: send u as is;
* ``stock_naive`` -- the vehicle runs Algorithm 1 and u is sent as is (what the paper's
  pipeline does on a stock vehicle; kept for the analysis);
* ``stock`` -- the vehicle runs Algorithm 1, u compensated as above (target: the wrench
  of Algorithm 2's motor PWMs, so the vehicle flies as on the paper's firmware);
* ``stock_wrench`` -- as ``stock``, aiming at the requested wrench tau_max u itself.

:class:`~brov2_hybrid.vehicle.firmware_detector.FirmwareDetector` tells from an override and
the motor outputs it produced (/mavros/rc/out) which mixer the vehicle runs (``auto``).
"""
import collections
import itertools
from dataclasses import dataclass

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.jit import compile_family
from brov2_hybrid.validate import as_vector
from brov2_hybrid.vehicle import stock_search
from brov2_hybrid.vehicle.allocation import HORIZONTAL_DOFS, VERTICAL_DOFS
from brov2_hybrid.vehicle.rc import rc_from_u, u_from_rc
from brov2_hybrid.vehicle.mixers import KINDS, MIXING_CODES, QUANTITATIVE, STOCK, motor_pwm_from_rc

#: Firmware names a vehicle can run (the mixer kinds of :mod:`brov2_hybrid.vehicle.mixers`).
FIRMWARES = KINDS
#: Weight of |u'|^2 against the squared normalized wrench error when choosing among the
#: 1 us candidates: only decides between candidates that deliver the same wrench.
TIE_BREAK = 1e-12
#: Values of the ``firmware`` parameter.
FIRMWARE_CHOICES = ("auto",) + FIRMWARES


@dataclass
class OutputCommand:
    """One command of an output stage. Wrenches (X, Y, Z, K, M, N) body FRD [N, N m]."""

    u_sent: np.ndarray         # (6,) u the vehicle reads from the channels (1/400 steps)
    channel_pwm: dict          # {RC channel: PWM us}
    motor_pwm: np.ndarray      # (n,) motor PWMs [us] the firmware will output, one per thruster
    force_n: np.ndarray        # (n,) thrust of each thruster at motor_pwm (thrust table) [N]
    tau_requested: np.ndarray  # (6,) tau_max * u
    tau_achieved: np.ndarray   # (6,) T @ force_n

    @property
    def tau_error(self):
        """tau_achieved - tau_requested (6,)."""
        return self.tau_achieved - self.tau_requested


class OutputStage(object):
    """u -> RC channels for one firmware. Subclasses set ``firmware`` and :meth:`u_to_send`.

    Parameters
    ----------
    vehicle : brov2_hybrid.vehicle.vehicle_file.Vehicle
    rc_map : brov2_hybrid.vehicle.rc.RCMap
    """

    name = ""
    firmware = ""

    def __init__(self, vehicle, rc_map):
        self.vehicle = vehicle
        self.rc_map = rc_map
        self.vehicle_mixer = vehicle.mixer(self.firmware)
        self.pwm_min_us = vehicle.thrusters.pwm_min_us
        self.pwm_max_us = vehicle.thrusters.pwm_max_us

    def u_to_send(self, u):
        """u (6,) in [-1, 1] -> the u to put on the channels (before 1 us quantization)."""
        raise NotImplementedError

    def channels(self, u):
        """u (6,) -> {RC channel: PWM us}: the override to send (the fast path)."""
        u = np.minimum(np.maximum(as_vector(u, 6, "u"), -1.0), 1.0)     # np.clip's result, cheaper
        return self.rc_map.pwm_from_u(self.u_to_send(u))

    def rc_and_motor_pwm(self, u):
        """u (6,) -> (channel PWMs per DOF of u (6,) [us], the motor PWMs the firmware outputs
        for them (n,) [us]): :meth:`channels` and :func:`~brov2_hybrid.vehicle.mixers.motor_pwm_from_rc`
        in two arrays, through the same kernels."""
        return self.rc_and_motor_pwm_of(np.minimum(np.maximum(as_vector(u, 6, "u"), -1.0), 1.0))

    def rc_and_motor_pwm_of(self, u):
        """:meth:`rc_and_motor_pwm` of a checked float u (6,) within [-1, 1] (the in-process loop's tick)."""
        m = self.rc_map
        rc, u_read, motor = np.empty(6), np.empty(6), np.empty(self.vehicle.n_thrusters)
        rc_from_u(self.u_to_send(u), m.signs, m.neutral_us, m.half_range_us, rc)
        u_from_rc(rc, m.signs, m.neutral_us, m.half_range_us, u_read)
        self.vehicle_mixer.motor_pwm_into(u_read, self.pwm_min_us, self.pwm_max_us, motor)
        return rc, motor

    def stick_wrench(self, u):
        """The body wrench [N, N m] (6,) the firmware's own manual chain gives when ``u`` (6,) is put on
        the channels as it is, uncompensated (RC -> u -> this firmware's mixer -> whole-microsecond motor
        PWMs -> thrust table -> T): what a pilot's sticks do through stock ArduSub, in MANUAL and, for
        surge and sway, in ALT_HOLD."""
        u = np.minimum(np.maximum(as_vector(u, 6, "u"), -1.0), 1.0)
        motor = motor_pwm_from_rc(self.rc_map.pwm_from_u(u), self.rc_map, self.vehicle_mixer, self.pwm_min_us,
                                  self.pwm_max_us)
        return self.vehicle.wrench_from_pwm(np.asarray(motor, dtype=float))

    def command(self, u):
        """u (6,) -> :class:`OutputCommand` with the motor PWMs and wrench it delivers."""
        u = np.minimum(np.maximum(as_vector(u, 6, "u"), -1.0), 1.0)
        rc = self.rc_map.pwm_from_u(self.u_to_send(u))
        motor = np.array(motor_pwm_from_rc(rc, self.rc_map, self.vehicle_mixer, self.pwm_min_us, self.pwm_max_us),
                         dtype=float)
        force = self.vehicle.table.force_from_pwm(motor)
        return OutputCommand(u_sent=self.rc_map.u_from_pwm(rc), channel_pwm=rc, motor_pwm=motor, force_n=force,
                             tau_requested=self.vehicle.tau_max * u, tau_achieved=self.vehicle.T @ force)


class QuantitativeFirmwareOutput(OutputStage):
    """The vehicle runs Algorithm 2 (the paper's firmware): u goes out unchanged."""

    name = QUANTITATIVE
    firmware = QUANTITATIVE

    def u_to_send(self, u):
        """u unchanged: Algorithm 2 in the vehicle does the allocation."""
        return u


class StockNaiveOutput(OutputStage):
    """The vehicle runs stock Algorithm 1 and u goes out unchanged (no compensation)."""

    name = "stock_naive"
    firmware = STOCK

    def u_to_send(self, u):
        """u unchanged (the dead band and group scaling of Algorithm 1 are left as they are)."""
        return u


class _Group(object):
    """One thruster group of :class:`StockCompensatedOutput` and its per-command constants.

    ``dofs`` (3 DOF indices), ``motors`` (indices of the thrusters they drive), ``A`` their
    frame factors (motors x 3) and its pseudo-inverse; the slices of T the search multiplies
    by on every command, built once (the same arrays, so the same floating-point products,
    as slicing them per command).
    """

    def __init__(self, dofs, T, T_hat_t):
        self.dofs = np.array(dofs, dtype=np.int64)
        self.motors = np.nonzero(np.any(T_hat_t[:, self.dofs] != 0.0, axis=1))[0].astype(np.int64)
        self.A = np.ascontiguousarray(T_hat_t[np.ix_(self.motors, self.dofs)])
        self.A_pinv = np.linalg.pinv(self.A)
        others = np.ones(T.shape[1], dtype=bool)
        others[self.motors] = False
        self.others = np.nonzero(others)[0].astype(np.int64)
        self.T_others = np.ascontiguousarray(T[:, self.others])  # the wrench of the thrusters outside the group
        self.T_g = np.ascontiguousarray(T[:, self.motors])
        self.T_g_dofs = np.ascontiguousarray(self.T_g[self.dofs])  # the group's own wrench rows


class StockCompensatedOutput(OutputStage):
    """The vehicle runs stock Algorithm 1; u' makes it output Algorithm 2's motor PWMs.

    The target is the wrench Algorithm 2's own (whole-microsecond) motor PWMs deliver, so
    the vehicle flies as on the paper's firmware, which the paper's gains assume.

    :meth:`u_to_send` is the one implementation every user flies (thruster_allocation,
    the in-process loop, the analysis): it forms the target and runs the search of
    :mod:`brov2_hybrid.vehicle.stock_search` per thruster group, compiled by numba where
    it is installed. :func:`~brov2_hybrid.bench.stock_search_reference.reference_stock_compensation`
    is the same search as first written (per-command slicing, ``np.linalg.lstsq``), kept
    as the baseline its tests and ``make bench`` compare it with: same RC values.
    """

    name = "stock"
    firmware = STOCK
    #: 'algorithm2': reproduce Algorithm 2's wrench; 'requested': tau_max * u itself.
    target = "algorithm2"
    #: Newton steps per group (they stop early once no motor moves).
    newton_steps = 3

    def __init__(self, vehicle, rc_map):
        super(StockCompensatedOutput, self).__init__(vehicle, rc_map)
        self.target_mixer = vehicle.mixer(QUANTITATIVE)
        self.half_range_us = float(rc_map.half_range_us)
        # The 2^3 neighbouring 1 us quantizations of a group's three channels.
        self.corners = np.array(list(itertools.product((0.0, 1.0), repeat=3)))
        T_hat_t = vehicle.T_hat.T  # (n, 6): motor i's factors for (surge, ..., yaw)
        # Per group (horizontal first, then vertical: its candidates are scored with the
        # horizontal thrusters' roll and pitch moments already known).
        self.groups = [_Group(dofs, vehicle.T, T_hat_t) for dofs in (HORIZONTAL_DOFS, VERTICAL_DOFS)]
        table = vehicle.table
        mixer = self.vehicle_mixer
        # The firmware's motor outputs already lie within the vehicle's PWM limits (the
        # usual 1100..1900): clipping them to the limits changes nothing and is skipped.
        full_range = (table.neutral_us - self.half_range_us, table.neutral_us + self.half_range_us)
        clip = not (self.pwm_min_us <= full_range[0] and full_range[1] <= self.pwm_max_us)
        # What compensated_command takes besides u and its target m*: the target's thrust
        # table and wrench, the two groups, the scoring and the stock mixer model (its kernel
        # code), the search settings and the PWM limits.
        self.command_args = (
            vehicle.T, vehicle.tau_max, self.target == "requested", table.pwm_us, table.force_n,
            table.slope_n_per_us, float(table.neutral_us), float(table.half_range_us), self.half_range_us,
            1.0 / vehicle.tau_max, np.ascontiguousarray(mixer.T_hat),
            MIXING_CODES[mixer.frame_mixing], float(mixer.fv_coupling_k or 0.0),
            0.5 * float(np.min(np.diff(table.pwm_us))),      # one-sided slope step [us]
            int(self.newton_steps), clip, float(self.pwm_min_us), float(self.pwm_max_us), TIE_BREAK,
            self.corners / self.half_range_us)
        for g in self.groups:      # horizontal, then vertical
            self.command_args += (g.dofs, g.motors, g.others, g.A, g.A_pinv, g.T_others, g.T_g.T,
                                  g.T_g_dofs)
        self._command = _command_kernel(self)

    def u_to_send(self, u):
        """u (6,) -> the channels' u that makes stock Algorithm 1 output the target motor PWMs
        (on the 1/400 grid; zero stays exactly zero)."""
        if not u.any():
            return u                                              # neutral stays exactly neutral
        return self._u_to_send(u, self._command)

    def _u_to_send(self, u, command):
        """:meth:`u_to_send` with :func:`~brov2_hybrid.vehicle.stock_search.compensated_command`
        ``command`` (compiled or Python), the target m* from the vehicle's Algorithm 2 mixer."""
        u_out = np.empty(6)
        command(u, self.target_mixer.normalized(u), *(self.command_args + (u_out,)))
        return u_out


def _command_kernel(stage):
    """:func:`~brov2_hybrid.vehicle.stock_search.compensated_command` compiled by numba (checked
    on probe commands of ``stage`` against the Python function), or the Python function."""
    def probe(compiled):
        rng = np.random.default_rng(16)
        for u in np.vstack([rng.uniform(-1.0, 1.0, (12, 6)), np.full((1, 6), 0.03), np.ones((1, 6))]):
            if not np.array_equal(stage._u_to_send(u, compiled["compensated_command"]),
                                  stage._u_to_send(u, stock_search.compensated_command)):
                return False
        return True
    kernels = compile_family("stock_search", stock_search.KERNELS, probe)
    return kernels["compensated_command"] if kernels else stock_search.compensated_command


class StockRequestedWrenchOutput(StockCompensatedOutput):
    """As :class:`StockCompensatedOutput`, aiming at the requested wrench tau_max * u.

    Closer to the request than Algorithm 2 itself for the smallest forces: Algorithm 2
    rounds each motor's PWM to the whole microsecond on its own (just past the dead band
    one microsecond is ~0.05 N, a large share of a small force); this stage picks the
    microseconds by the wrench they deliver together.
    """

    name = "stock_wrench"
    target = "requested"


#: Output stages by name.
OUTPUT_STAGES = collections.OrderedDict(
    (cls.name, cls) for cls in (QuantitativeFirmwareOutput, StockNaiveOutput, StockCompensatedOutput,
                                StockRequestedWrenchOutput))


def output_stage(name, vehicle, rc_map):
    """The output stage called ``name`` (``quantitative``, ``stock`` or ``stock_naive``)."""
    if name not in OUTPUT_STAGES:
        raise Brov2Error("output stage: expected one of %s, got %r" % (tuple(OUTPUT_STAGES), name))
    return OUTPUT_STAGES[name](vehicle, rc_map)


def stage_for_firmware(firmware, vehicle, rc_map):
    """The output stage to fly a vehicle running ``firmware`` ('quantitative' or 'stock')."""
    if firmware not in FIRMWARES:
        raise Brov2Error("firmware: expected one of %s, got %r" % (FIRMWARES, firmware))
    return output_stage(firmware, vehicle, rc_map)
