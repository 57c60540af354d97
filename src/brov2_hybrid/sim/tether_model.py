"""The simulated tether: its settings (``params/simulator.yaml`` section ``tether``) and its state (:class:`Tether`).

The model and its integration are :mod:`brov2_hybrid.sim.tether` (seed 003 Sec. 6);
this module holds the cable's nodes between the base and the vehicle's attachment point
(the vehicle file's ``body.tether_attachment_m``) and turns the pull on the attachment
point into a body wrench. NED [m, m/s, N]; body FRD.
"""
import math
from dataclasses import dataclass, replace

import numpy as np

from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section
from brov2_hybrid.validate import as_vector
from brov2_hybrid.sim import tether as tether_math

#: The keys of the ``tether`` section.
TETHER_KEYS = ("enabled", "length_m", "segments", "mass_per_length_kg_m", "diameter_m", "normal_drag_coefficient",
               "tangential_drag_coefficient", "internal_damping_n_s_m", "young_modulus_n_m2",
               "added_mass_coefficient", "water_density_kg_m3", "base_ned_m", "base_velocity_ned_m_s",
               "step_s", "newton_iterations", "newton_tolerance_m_s")


@dataclass(frozen=True)
class TetherSettings:
    """The tether's settings (``params/simulator.yaml`` section ``tether``; seed 003 Table A1's cable by default)."""

    enabled: bool
    length_m: float
    segments: int
    mass_per_length_kg_m: float
    diameter_m: float
    normal_drag_coefficient: float
    tangential_drag_coefficient: float
    internal_damping_n_s_m: float
    young_modulus_n_m2: float
    added_mass_coefficient: float
    water_density_kg_m3: float
    base_ned_m: np.ndarray
    base_velocity_ned_m_s: np.ndarray
    step_s: float
    newton_iterations: int
    newton_tolerance_m_s: float

    @property
    def segment_length_m(self):
        """Unstretched length of one segment l0 [m]."""
        return self.length_m / self.segments

    @property
    def axial_stiffness_n_m(self):
        """E A / l0 of one segment [N/m]."""
        area = math.pi * 0.25 * self.diameter_m ** 2
        return self.young_modulus_n_m2 * area / self.segment_length_m

    def with_changes(self, **changes):
        """A copy with ``changes`` applied (e.g. ``segments=20``), checked like the file."""
        out = replace(self, **changes)
        check_settings(out, "TetherSettings")
        return out

    def constants(self, current_ned_m_s):
        """The constants tuple of :func:`brov2_hybrid.sim.tether.step` for a constant current (3,) [m/s]."""
        l0 = self.segment_length_m
        area = math.pi * 0.25 * self.diameter_m ** 2
        cn, ce, cd = [float(a) for a in as_vector(current_ned_m_s, 3, "current_ned_m_s")]
        return (self.axial_stiffness_n_m, l0, self.internal_damping_n_s_m, self.mass_per_length_kg_m * l0,
                self.added_mass_coefficient * self.water_density_kg_m3 * area * l0,
                0.5 * self.water_density_kg_m3 * self.diameter_m, self.normal_drag_coefficient,
                self.tangential_drag_coefficient, cn, ce, cd)

    def base_at(self, t_s):
        """(position, velocity) of the base at time ``t_s`` [s], NED: it moves at a constant velocity."""
        return self.base_ned_m + self.base_velocity_ned_m_s * float(t_s), self.base_velocity_ned_m_s.copy()


def no_tether_arguments():
    """:meth:`Tether.kernel_arguments`' types without a tether (on False): what a kernel that may
    step a tether is given when there is none (numba types each call's arguments)."""
    return (False, np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(1), np.zeros(3), np.zeros(3), np.zeros(3),
            (0.0,) * 11, 1, 1.0, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(4), 1.0)


def check_settings(s, where):
    """Raise ParameterError naming ``where`` if ``s`` (:class:`TetherSettings`) holds a bad value."""
    for name in ("segments", "newton_iterations"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (2 if name == "segments" else 1):
            raise ParameterError("%s.%s: expected an integer >= %d, got %r"
                                 % (where, name, 2 if name == "segments" else 1, value))
    for name in ("length_m", "mass_per_length_kg_m", "diameter_m", "young_modulus_n_m2", "water_density_kg_m3",
                 "step_s", "newton_tolerance_m_s"):
        value = getattr(s, name)
        if not (math.isfinite(value) and value > 0):
            raise ParameterError("%s.%s: expected a value > 0, got %r" % (where, name, value))
    for name in ("normal_drag_coefficient", "tangential_drag_coefficient", "internal_damping_n_s_m",
                 "added_mass_coefficient"):
        value = getattr(s, name)
        if not (math.isfinite(value) and value >= 0):
            raise ParameterError("%s.%s: expected a value >= 0, got %r" % (where, name, value))


def load_tether_settings(path, data):
    """:class:`TetherSettings` from the ``tether`` section of ``data`` (read from ``path``)."""
    t = Section(data, path, "tether")
    unknown = sorted(set(t.data) - set(TETHER_KEYS))
    if unknown:
        raise ParameterError("%s:tether: unknown key(s) %s (expected %s)" % (path, unknown, list(TETHER_KEYS)))
    settings = TetherSettings(
        enabled=t.boolean("enabled"), length_m=t.positive("length_m"), segments=t.integer("segments", 2),
        mass_per_length_kg_m=t.positive("mass_per_length_kg_m"), diameter_m=t.positive("diameter_m"),
        normal_drag_coefficient=t.number("normal_drag_coefficient", 0.0),
        tangential_drag_coefficient=t.number("tangential_drag_coefficient", 0.0),
        internal_damping_n_s_m=t.number("internal_damping_n_s_m", 0.0),
        young_modulus_n_m2=t.positive("young_modulus_n_m2"),
        added_mass_coefficient=t.number("added_mass_coefficient", 0.0),
        water_density_kg_m3=t.positive("water_density_kg_m3"),
        base_ned_m=t.vector("base_ned_m", 3), base_velocity_ned_m_s=t.vector("base_velocity_ned_m_s", 3),
        step_s=t.positive("step_s"), newton_iterations=t.integer("newton_iterations", 1), newton_tolerance_m_s=t.positive("newton_tolerance_m_s"))
    check_settings(settings, "%s:tether" % path)
    return settings


class Tether(object):
    """The tether's nodes between the base and a vehicle's attachment point.

    Parameters
    ----------
    settings : TetherSettings
    current_ned_m_s : array_like (3,)
        Constant current [m/s] (the simulator's ``physics.current_ned_m_s``).
    attachment_m : array_like (3,)
        Attachment point from the body origin, FRD [m] (the vehicle file's ``body.tether_attachment_m``).
    """

    def __init__(self, settings, current_ned_m_s, attachment_m):
        check_settings(settings, "TetherSettings")
        self.settings = settings
        self.attachment_m = as_vector(attachment_m, 3, "attachment_m")
        self._c = settings.constants(current_ned_m_s)
        self._kernels = tether_math.kernels()
        n = settings.segments
        self.p = np.zeros((n + 1, 3))
        self.v = np.zeros((n + 1, 3))
        self.t_s = 0.0
        #: Plant steps taken on the tether, the cable's implicit steps among them and the Newton
        #: iterations those took (iterations / solves: the solver's cost per cable step).
        self.steps, self.solves, self.iterations = 0, 0, 0
        #: The plant steps taken in the current cable step, and the pull [N, NED] held over it.
        self.hold = np.zeros(4)
        #: Per NED axis, the sum and the largest of |pull| [N] over the steps (:meth:`summary_line`).
        self.pull_sum_n, self.pull_max_n = np.zeros(3), np.zeros(3)

    def attachment_state(self, state):
        """(position, velocity) NED of the attachment point for a plant state
        [north, east, down, qw, qx, qy, qz, u, v, w, p, q, r]."""
        position, velocity = np.empty(3), np.empty(3)
        self._kernels["attachment_point"](np.asarray(state, dtype=float), self.attachment_m, position, velocity)
        return position, velocity

    def reset(self, state, t_s=0.0):
        """Lay the tether straight from the base to the attachment point of plant ``state``, at rest.

        Shorter than the cable, it starts slack (and takes its shape from the current);
        longer, it starts stretched.
        """
        self.t_s = float(t_s)
        base, base_v = self.settings.base_at(self.t_s)
        end, end_v = self.attachment_state(state)
        fractions = np.linspace(0.0, 1.0, self.settings.segments + 1)[:, None]
        self.p = base + fractions * (end - base)
        self.v = base_v + fractions * (end_v - base_v)
        self.hold[:] = 0.0      # the next plant step begins a cable step

    def kernel_arguments(self):
        """The tether as :func:`brov2_hybrid.sim.stepper.tethered_steps` takes it, after a leading True
        (on): (True, p, v, clock (1,) [s], base_ned_m, base_velocity_ned_m_s, attachment_m,
        constants, Newton iterations, tolerance [m/s], tally (3,) plant steps, Newton iterations and
        cable steps, pull_sum_n, pull_max_n, hold (4,), step_s). The nodes, the pull figures and the
        hold are this tether's own arrays, updated in place; hand the tuple back to
        :meth:`took_steps` after the run."""
        s = self.settings
        return (True, self.p, self.v, np.array([self.t_s]), s.base_ned_m, s.base_velocity_ned_m_s, self.attachment_m,
                self._c, int(s.newton_iterations), float(s.newton_tolerance_m_s), np.zeros(3), self.pull_sum_n,
                self.pull_max_n, self.hold, float(s.step_s))

    def took_steps(self, arguments):
        """Take the time and the tallies a kernel left in ``arguments`` (:meth:`kernel_arguments`)."""
        self.t_s = float(arguments[3][0])
        self.steps += int(arguments[10][0])
        self.iterations += int(arguments[10][1])
        self.solves += int(arguments[10][2])

    def summary_line(self):
        """One line for the simulators' logs: the pull per NED axis as seed 003's Table 9 counts it
        (the average of |F|) and its largest, and the solver's cost."""
        if not self.steps:
            return "tether: no steps"
        mean = self.pull_sum_n / self.steps
        return ("tether (%g m, %d segments): %d steps, pull on the vehicle |F| north / east / down: mean %.1f / %.1f / "
                "%.1f N, largest %.1f / %.1f / %.1f N; %d cable steps, %.2f Newton iterations each"
                % (self.settings.length_m, self.settings.segments, self.steps, mean[0], mean[1], mean[2],
                   self.pull_max_n[0], self.pull_max_n[1], self.pull_max_n[2], self.solves,
                   self.iterations / max(self.solves, 1)))

    def force_ned(self):
        """Force [N] (3,) the tether exerts on the vehicle, NED: the pull held over the current cable step
        (zero before the first step)."""
        return self.hold[1:4].copy()

    def wrench_body(self, state):
        """Body wrench [N, N m] (6,) of the tether's pull at the attachment point, for plant ``state``."""
        out = np.empty(6)
        self._kernels["pull_wrench"](np.asarray(state, dtype=float), self.force_ned(), self.attachment_m, out)
        return out


def integrate_tethered(tether, stepper, state, n, dt, tau, constants, lag_terms):
    """``n`` plant steps of ``dt`` [s] with ``tether`` pulling, by ``stepper``
    (:func:`brov2_hybrid.sim.stepper.tethered_steps` or its compiled twin): each step the plant's
    stepper with the thruster wrench ``tau`` plus the tether's wrench, then the tether's step to
    the vehicle's new state. Advances ``tether`` (nodes, time, tallies); returns the new plant
    state (a list)."""
    args = tether.kernel_arguments()
    x = stepper(np.array(state, dtype=float), int(n), float(dt), np.array(tau, dtype=float), constants, lag_terms,
                *args[1:])
    tether.took_steps(args)
    return [float(a) for a in x]
