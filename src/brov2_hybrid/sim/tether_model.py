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
               "newton_iterations", "newton_tolerance_m_s")


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


def check_settings(s, where):
    """Raise ParameterError naming ``where`` if ``s`` (:class:`TetherSettings`) holds a bad value."""
    for name in ("segments", "newton_iterations"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (2 if name == "segments" else 1):
            raise ParameterError("%s.%s: expected an integer >= %d, got %r"
                                 % (where, name, 2 if name == "segments" else 1, value))
    for name in ("length_m", "mass_per_length_kg_m", "diameter_m", "young_modulus_n_m2", "water_density_kg_m3",
                 "newton_tolerance_m_s"):
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
        newton_iterations=t.integer("newton_iterations", 1), newton_tolerance_m_s=t.positive("newton_tolerance_m_s"))
    check_settings(settings, "%s:tether" % path)
    return settings


def quaternion_matrix(qw, qx, qy, qz):
    """Rotation body FRD -> NED (3, 3) of the unit quaternion (w, x, y, z)."""
    return np.array([
        [1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy)],
        [2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx)],
        [2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy)]])


def cross3(a, b):
    """a x b for two (3,) vectors (np.cross costs ten times more on vectors this short)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


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
        #: Steps taken and Newton iterations they took (their ratio: the solver's cost per step).
        self.steps, self.iterations = 0, 0
        #: Per NED axis, the sum and the largest of |pull| [N] over the steps (:meth:`summary_line`).
        self.pull_sum_n, self.pull_max_n = np.zeros(3), np.zeros(3)

    def attachment_state(self, state):
        """(position, velocity) NED of the attachment point for a plant state
        [north, east, down, qw, qx, qy, qz, u, v, w, p, q, r]."""
        R = quaternion_matrix(state[3], state[4], state[5], state[6])
        r_a = self.attachment_m
        omega = np.array(state[10:13], dtype=float)
        position = np.array(state[0:3], dtype=float) + R @ r_a
        velocity = R @ (np.array(state[7:10], dtype=float) + cross3(omega, r_a))
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

    def advance(self, h, state):
        """One step of ``h`` [s] with the vehicle already at plant ``state`` (the step's end)."""
        self.t_s += h
        base, base_v = self.settings.base_at(self.t_s)
        end, end_v = self.attachment_state(state)
        s = self.settings
        self.p, self.v, used = self._kernels["step"](self.p, self.v, float(h), base, base_v, end, end_v, self._c,
                                                     int(s.newton_iterations), float(s.newton_tolerance_m_s))
        self.steps += 1
        self.iterations += int(used)
        pull = np.abs(self.force_ned())
        self.pull_sum_n += pull
        np.maximum(self.pull_max_n, pull, out=self.pull_max_n)

    def summary_line(self):
        """One line for the simulators' logs: the pull per NED axis as seed 003's Table 9 counts it
        (the average of |F|) and its largest, and the solver's cost."""
        if not self.steps:
            return "tether: no steps"
        mean = self.pull_sum_n / self.steps
        return ("tether (%g m, %d segments): %d steps, pull on the vehicle |F| north / east / down: mean %.1f / %.1f / "
                "%.1f N, largest %.1f / %.1f / %.1f N; %.2f Newton iterations a step"
                % (self.settings.length_m, self.settings.segments, self.steps, mean[0], mean[1], mean[2],
                   self.pull_max_n[0], self.pull_max_n[1], self.pull_max_n[2], self.iterations / self.steps))

    def force_ned(self):
        """Force [N] (3,) the tether exerts on the vehicle, NED."""
        k_axial, l0, damping = self._c[0], self._c[1], self._c[2]
        return self._kernels["end_force"](self.p, self.v, k_axial, l0, damping)

    def wrench_body(self, state):
        """Body wrench [N, N m] (6,) of the tether's pull at the attachment point, for plant ``state``."""
        R = quaternion_matrix(state[3], state[4], state[5], state[6])
        force_body = R.T @ self.force_ned()
        return np.concatenate([force_body, cross3(self.attachment_m, force_body)])


def integrate_tethered(tether, integrate, state, n, dt, tau, constants, lag_terms):
    """``n`` plant steps of ``dt`` [s] with ``tether`` pulling: each step the plant's ``integrate``
    (:func:`brov2_hybrid.sim.plant.integrate` or its compiled twin) with the thruster wrench
    ``tau`` plus the tether's wrench, then the tether's step to the vehicle's new state.
    Returns the new plant state (a list)."""
    x = list(state)
    for _ in range(int(n)):
        pull = tether.wrench_body(x)
        total = tuple(float(a) + float(b) for a, b in zip(tau, pull))
        if lag_terms is None:
            x = list(integrate(tuple(x), 1, dt, total, constants, None))
        else:
            x = list(integrate(x, 1, dt, list(total), constants, lag_terms))
        tether.advance(dt, x)
    return x
