"""The identification flight's excitation schedule (``params/identify.yaml``, section ``schedule``).

Per axis a block of short, bounded inputs, the other attitudes held level by the PD law:

* roll, pitch: closed-loop holds at +-hold_deg (the restoring moment of buoyancy), then
  1-2-1 doublets of open-loop torque (+T for w, -T for 2w, +T for w: the angle comes back);
* heave: open-loop heave force steps (+ down), in down/up pairs;
* yaw: open-loop torque steps of alternating sign (the paper's Sec. 3 constant-torque runs).

Every pulse group ends with a closed-loop rest at level. A :class:`Schedule` is a list of
:class:`Segment`; it gives the dive the loop flies (desired attitude, open-loop heave) and
the open-loop torque in force at a time. Body FRD, NED; rad, s, N, N m inside.
"""
import math
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import paths
from brov2_hybrid.dive.dive_csv import Dive
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, DOF_NAMES
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml

#: Blocks in the order they are flown (yaw last: the heading is left wherever it ends).
HEAVE = DOF_NAMES.index("heave")
BLOCK_ORDER = ANGULAR_DOF_NAMES[:2] + (DOF_NAMES[HEAVE], ANGULAR_DOF_NAMES[2])


@dataclass(frozen=True)
class Segment:
    """One piece of the schedule, ``t0_s`` <= t < ``t1_s``.

    ``block``: the axis block it belongs to (or ``lead_in``); ``dof``: the open-loop DOF
    (0..5, :data:`~brov2_hybrid.dofs.DOF_NAMES`) or -1 when every attitude is closed loop;
    ``value``: the open-loop torque [N m] or force [N]; ``eta2d_rad`` (3,): the desired
    attitude meanwhile; ``group``: pulses of one group share it (the guard acts per group).
    """

    t0_s: float
    t1_s: float
    block: str
    dof: int
    value: float
    eta2d_rad: tuple
    group: int


@dataclass(frozen=True)
class ScheduleSettings:
    """The ``schedule`` section of ``params/identify.yaml`` (angles already in rad)."""

    lead_in_s: float
    rest_s: float
    guard_rad: float
    holds: dict          # axis -> (hold_rad, hold_s)
    doublets: dict       # axis -> [(torque_nm, pulse_s), ...]
    heave_forces_n: tuple
    heave_step_s: float
    yaw_torques_nm: tuple
    yaw_step_s: float
    depth_keeper: tuple  # (kp [N/m], kd [N s/m], rate filter [s], max force [N])


def _numbers(section, key, positive=False):
    raw = section.raw(key)
    if not (isinstance(raw, list) and raw and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  and math.isfinite(v) for v in raw)):
        raise ParameterError("%s: expected a non-empty list of numbers, got %r" % (section.key(key), raw))
    if positive and min(raw) <= 0:
        raise ParameterError("%s: expected numbers > 0, got %r" % (section.key(key), raw))
    return tuple(float(v) for v in raw)


def load_schedule_settings(path=None):
    """:class:`ScheduleSettings` from ``path`` (default ``params/identify.yaml``)."""
    path = path or paths.params_path("identify.yaml")
    s = Section(load_yaml(path), path, "schedule")
    holds, doublets = {}, {}
    for axis in ("roll", "pitch"):
        a = s.sub(axis)
        holds[axis] = (math.radians(a.number("hold_deg", 0.0, 45.0)), a.positive("hold_s"))
        torques, pulses = _numbers(a, "doublet_torques_nm", True), _numbers(a, "doublet_pulse_s", True)
        if len(torques) != len(pulses):
            raise ParameterError("%s: expected one pulse width per doublet torque (%d torques, %d widths)"
                                 % (a.key("doublet_pulse_s"), len(torques), len(pulses)))
        doublets[axis] = list(zip(torques, pulses))
    heave, yaw, keeper = s.sub("heave"), s.sub("yaw"), s.sub("depth_keeper")
    return ScheduleSettings(
        lead_in_s=s.number("lead_in_s", 0.0), rest_s=s.positive("rest_s"),
        guard_rad=math.radians(s.number("guard_deg", 1.0, 80.0)), holds=holds, doublets=doublets,
        heave_forces_n=_numbers(heave, "step_forces_n"), heave_step_s=heave.positive("step_s"),
        yaw_torques_nm=_numbers(yaw, "step_torques_nm"), yaw_step_s=yaw.positive("step_s"),
        depth_keeper=(keeper.number("kp_n_per_m", 0.0), keeper.number("kd_n_s_per_m", 0.0),
                      keeper.positive("rate_filter_s"), keeper.positive("max_force_n")))


class Schedule(object):
    """The excitation as a list of :class:`Segment` (built by :func:`build_schedule`)."""

    def __init__(self, segments, guard_rad, depth_keeper=None):
        self.segments = list(segments)
        self.guard_rad = float(guard_rad)
        #: (kp, kd, rate filter, max force) of the flight's depth keeper, or None
        self.depth_keeper = depth_keeper
        self._starts = np.array([seg.t0_s for seg in self.segments])

    @property
    def duration_s(self):
        """Length of the flight [s]."""
        return self.segments[-1].t1_s

    def at(self, t_s):
        """The :class:`Segment` in force at ``t_s`` [s] (the last one after the end)."""
        k = int(np.searchsorted(self._starts, t_s, side="right")) - 1
        return self.segments[min(max(k, 0), len(self.segments) - 1)]

    def block_span(self, block):
        """(start, end) [s] of ``block`` ('roll', 'pitch', 'heave', 'yaw')."""
        inside = [seg for seg in self.segments if seg.block == block]
        if not inside:
            raise ParameterError("schedule: no block %r" % block)
        return inside[0].t0_s, inside[-1].t1_s

    def dive(self, rate_hz, tau_max):
        """The :class:`~brov2_hybrid.dive.dive_csv.Dive` the loop flies: desired attitude per
        segment and the heave force as a normalized command (``tau_max`` (6,) [N, N m])."""
        t = np.arange(0.0, self.duration_s + 0.5 / rate_hz, 1.0 / rate_hz)
        eta2d = np.zeros((len(t), 3))
        u_lin = np.zeros((len(t), 3))
        for k, tk in enumerate(t):
            seg = self.at(tk)
            eta2d[k] = seg.eta2d_rad
            if seg.dof == HEAVE:
                u_lin[k, 2] = seg.value / float(tau_max[HEAVE])
        if np.max(np.abs(u_lin)) > 1.0:
            raise ParameterError("schedule: a heave force exceeds tau_max %.1f N" % tau_max[HEAVE])
        return Dive(t, eta2d, u_lin, "identification schedule")


def build_schedule(settings, skip=()):
    """The :class:`Schedule` of ``settings`` (:class:`ScheduleSettings`), blocks in :data:`BLOCK_ORDER`
    but those named in ``skip`` (e.g. a vehicle's passive DOFs)."""
    segments = []
    clock = [0.0]
    group = [0]
    level = (0.0, 0.0, 0.0)

    def add(block, duration, dof=-1, value=0.0, eta2d=level):
        segments.append(Segment(clock[0], clock[0] + duration, block, dof, value, tuple(eta2d), group[0]))
        clock[0] += duration

    def rest(block):
        add(block, settings.rest_s)
        group[0] += 1

    if settings.lead_in_s > 0:
        add("lead_in", settings.lead_in_s)
    for block in BLOCK_ORDER:
        if block in skip:
            continue
        group[0] += 1
        if block in ("roll", "pitch"):
            axis = ANGULAR_DOF_NAMES.index(block)
            hold_rad, hold_s = settings.holds[block]
            for sign in (1.0, -1.0):
                held = [0.0, 0.0, 0.0]
                held[axis] = sign * hold_rad
                add(block, hold_s, eta2d=held)
            rest(block)
            for torque, width in settings.doublets[block]:
                for factor, span in ((1.0, width), (-1.0, 2.0 * width), (1.0, width)):
                    add(block, span, 3 + axis, factor * torque)
                rest(block)
        elif block == "heave":
            for force in settings.heave_forces_n:
                add(block, settings.heave_step_s, HEAVE, force)
            rest(block)
        else:
            for torque in settings.yaw_torques_nm:
                add(block, settings.yaw_step_s, 5, torque)
            rest(block)
    return Schedule(segments, settings.guard_rad, settings.depth_keeper)
