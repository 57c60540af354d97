"""Experiment settings read from ``params/analysis.yaml`` (one dataclass per section).

Every key is checked on load; a missing key or a non-physical value raises
:class:`~brov2_hybrid.errors.ParameterError` naming the file and the key. Angles are
converted from the file's degrees to radians here, once.
"""
import math
from dataclasses import dataclass

from brov2_hybrid import paths
from brov2_hybrid.errors import ParameterError
from brov2_hybrid.params import Section, load_yaml
from brov2_hybrid.loop.settings import DEFAULT_ANALYSIS_FILE, LoopSettings, loop_settings


@dataclass(frozen=True)
class LatencyCase:
    """One loop latency of the ``latency`` section: attitude telemetry rate [Hz] and transport
    delays [s] of telemetry and commands; ``desired_rate_hz`` optionally changes the rate of the
    step input samples too."""
    name: str
    telemetry_rate_hz: float
    telemetry_delay_s: float
    command_delay_s: float
    desired_rate_hz: object = None  # float: also change the rate of the step input samples


@dataclass(frozen=True)
class StepSettings:
    """The ``step`` section: the yaw step (time [s], size [rad], run length [s]; the LTI
    response's length), the settling band (fraction of the step) and the omega_d values flown
    and plotted [rad/s]."""
    step_time_s: float
    step_rad: float
    duration_s: float
    lti_duration_s: float
    settle_band: float
    omega_d_rad_s: tuple
    plot_omega_d_rad_s: tuple


@dataclass(frozen=True)
class BodeSettings:
    """The ``bode`` section: sine amplitude [rad], frequencies [Hz], omega_d values [rad/s], and how
    much of each run is transient (periods, at least ``min_transient_s``) and analysed (periods)."""
    amplitude_rad: float
    freqs_hz: tuple
    omega_d_rad_s: tuple
    transient_periods: float
    min_transient_s: float
    analysed_periods: float


@dataclass(frozen=True)
class DiveSettings:
    """The ``dive`` section: the dive CSV flown (path relative to the package) and the omega_d
    values [rad/s]."""
    csv_file: str
    omega_d_rad_s: tuple


@dataclass(frozen=True)
class CompareSettings:
    """The ``compare`` section (model vs stock-model runs): omega_d values [rad/s], run length [s],
    the window [s] and floor [rad] of the error measure."""
    omega_d_rad_s: tuple
    duration_s: float
    error_window_s: float
    error_floor_rad: float


@dataclass(frozen=True)
class SysidSettings:
    """The ``sysid`` section (inertia identification from torque steps): torques [N m], run
    length [s], sample rate [Hz], steady window [s], inertia bounds [kg m^2] of the fit, and the
    settling tolerance and window [s]."""
    torques_nm: tuple
    duration_s: float
    sample_rate_hz: float
    steady_window_s: tuple
    inertia_bounds_kg_m2: tuple
    settle_tolerance: float
    settle_window_s: float


@dataclass(frozen=True)
class PaperFigures:
    """Published numbers REPORT.md compares with (Table 1, Sec. 3)."""

    table1_omega_d_rad_s: tuple
    table1_error_old_model_pct: tuple
    table1_error_new_model_pct: tuple
    yaw_quadratic_drag_nm_s2: float
    yaw_inertia_kg_m2: float
    sysid_tolerance: float


@dataclass(frozen=True)
class AnalysisSettings:
    """All sections of ``params/analysis.yaml``."""

    loop: LoopSettings
    step: StepSettings
    bode: BodeSettings
    dive: DiveSettings
    latency_cases: tuple
    paper_jump_omega_d_rad_s: float
    compare: CompareSettings
    sysid: SysidSettings
    gains_omega_d_rad_s: tuple
    trim_rate_max_rad_s: tuple
    paper: PaperFigures = None
    firmware: object = None        # FirmwareSettings
    integral: object = None        # IntegralSettings
    robustness: object = None      # RobustnessSettings
    source: str = ""


@dataclass(frozen=True)
class FirmwareSettings:
    """Output stages on stock vs quantitative firmware (brov2-analyze firmware)."""

    amplitudes: tuple              # |u| levels of the torque-fidelity table
    random_commands: int           # random commands per level
    seed: int
    small_u: float                 # smallest |u| that must be delivered within small_u_tolerance
    small_u_tolerance: float
    omega_d_rad_s: tuple           # closed-loop step sweep and dive


@dataclass(frozen=True)
class IntegralSettings:
    """PD vs PD+I (brov2-analyze integral, :mod:`brov2_hybrid.analysis.integral`)."""

    omega_d_rad_s: tuple          # plateau dive runs
    step_omega_d_rad_s: tuple     # yaw steps with PD+I
    ratio: float                  # integral ratio epsilon of the PD+I runs
    attitude_rad: float           # +- roll / pitch of the plateaus
    plateau_s: float
    measure_fraction: float       # last fraction of each plateau measured as steady
    desired_rate_hz: float
    lti_duration_s: float


@dataclass(frozen=True)
class RobustnessSettings:
    """Monte Carlo PD vs PD+I (brov2-analyze robustness, :mod:`brov2_hybrid.analysis.robustness`):
    ranges of the drawn plant mismatch and the runs each sample flies."""

    seed: int
    samples: int                  # per omega_d and law
    omega_d_rad_s: tuple
    ratio: float                  # integral ratio of the PD+I runs
    mass_fraction: float          # rigid-body mass x U(1 - f, 1 + f)
    inertia_fraction: float
    added_mass_fraction: float
    drag_fraction: float          # linear and quadratic drag, per DOF
    net_buoyancy_n: float         # B - W shifted by U(-b, b) N
    cb_height_fraction: float     # CB height above the CG x U(1 - h, 1 + h)
    current_max_m_s: float
    latency_max_s: float
    attitude_noise_std_rad: float
    rate_noise_std_rad_s: float
    step_deg: float
    step_time_s: float
    step_duration_s: float
    plateau_s: float
    attitude_deg: float
    # the tethered sweep: this many samples per omega_d and law (0: none), each on a tether of
    # U(tether_length_m) [m] in its current (a generator of its own: the untethered samples stay)
    tether_samples: int = 0
    tether_length_m: tuple = (35.0, 35.0)


def grid(start, stop, step):
    """Inclusive grid start..stop in ``step`` increments, rounded to 1e-9 (no float drift)."""
    n = int(math.floor((stop - start) / step + 1e-9)) + 1
    return tuple(float(round(start + k * step, 9)) for k in range(n))


def _latency_case(entry, path, index):
    where = "%s:latency.cases[%d]" % (path, index)
    if not isinstance(entry, dict):
        raise ParameterError("%s: expected a mapping" % where)
    s = Section(entry, where, None)
    unknown = sorted(set(entry) - {"name", "telemetry_rate_hz", "telemetry_delay_s", "command_delay_s",
                                   "desired_rate_hz"})
    if unknown:
        raise ParameterError("%s: unknown key(s) %s" % (where, unknown))
    return LatencyCase(name=str(s.raw("name")), telemetry_rate_hz=s.positive("telemetry_rate_hz"),
                       telemetry_delay_s=s.number("telemetry_delay_s", minimum=0.0),
                       command_delay_s=s.number("command_delay_s", minimum=0.0),
                       desired_rate_hz=s.positive("desired_rate_hz") if "desired_rate_hz" in entry else None)


def _integral_settings(data, path):
    it = Section(data, path, "integral")
    return IntegralSettings(
        omega_d_rad_s=it.positive_list("omega_d_rad_s"), step_omega_d_rad_s=it.positive_list("step_omega_d_rad_s"),
        ratio=it.number("ratio", minimum=0.0), attitude_rad=math.radians(it.finite("attitude_deg")),
        plateau_s=it.positive("plateau_s"), measure_fraction=it.number("measure_fraction", 0.0, 1.0, strict_min=True),
        desired_rate_hz=it.positive("desired_rate_hz"), lti_duration_s=it.positive("lti_duration_s"))


def _robustness_settings(data, path):
    rb = Section(data, path, "robustness")
    spreads = ("mass_fraction", "inertia_fraction", "added_mass_fraction", "drag_fraction", "net_buoyancy_n",
               "cb_height_fraction", "current_max_m_s", "latency_max_s", "attitude_noise_std_rad",
               "rate_noise_std_rad_s", "step_time_s")
    return RobustnessSettings(
        seed=rb.integer("seed", 0), samples=rb.integer("samples", 1), omega_d_rad_s=rb.positive_list("omega_d_rad_s"),
        ratio=rb.number("ratio", minimum=0.0), step_deg=rb.finite("step_deg"), step_duration_s=rb.positive("step_duration_s"),
        plateau_s=rb.positive("plateau_s"), attitude_deg=rb.finite("attitude_deg"),
        tether_samples=rb.integer("tether_samples", 0), tether_length_m=_length_range(rb, "tether_length_m"),
        **{k: rb.number(k, minimum=0.0) for k in spreads})


def _length_range(section, key):
    """(min, max) [m] of a ``[min, max]`` key, 0 < min <= max."""
    lo, hi = (float(v) for v in section.positive_vector(key, 2))
    if lo > hi:
        raise ParameterError("%s: expected [min, max] with min <= max, got [%g, %g]" % (section.key(key), lo, hi))
    return (lo, hi)


def load_analysis_settings(path=None):
    """Read ``params/analysis.yaml`` (or ``path``) into :class:`AnalysisSettings`."""
    path = path or paths.params_path(DEFAULT_ANALYSIS_FILE)
    data = load_yaml(path)
    loop = loop_settings(data, path)
    st = Section(data, path, "step")
    band = st.positive("settle_band")
    if band >= 1.0:
        raise ParameterError("%s:step.settle_band: expected a fraction < 1, got %r" % (path, band))
    step = StepSettings(
        step_time_s=st.number("step_time_s", minimum=0.0), step_rad=math.radians(st.finite("step_deg")),
        duration_s=st.positive("duration_s"), lti_duration_s=st.positive("lti_duration_s"), settle_band=band,
        omega_d_rad_s=grid(st.positive("omega_d_min_rad_s"), st.positive("omega_d_max_rad_s"),
                           st.positive("omega_d_step_rad_s")),
        plot_omega_d_rad_s=st.positive_list("plot_omega_d_rad_s"))
    bd = Section(data, path, "bode")
    bode = BodeSettings(
        amplitude_rad=math.radians(bd.positive("amplitude_deg")),
        freqs_hz=grid(bd.positive("freq_min_hz"), bd.positive("freq_max_hz"), bd.positive("freq_step_hz")),
        omega_d_rad_s=bd.positive_list("omega_d_rad_s"),
        transient_periods=bd.number("transient_periods", minimum=0.0),
        min_transient_s=bd.number("min_transient_s", minimum=0.0),
        analysed_periods=bd.positive("analysed_periods"))
    dv = Section(data, path, "dive")
    dive = DiveSettings(csv_file=str(dv.raw("csv_file")), omega_d_rad_s=dv.positive_list("omega_d_rad_s"))
    la = Section(data, path, "latency")
    cases = la.raw("cases")
    if not (isinstance(cases, list) and cases):
        raise ParameterError("%s:latency.cases: expected a non-empty list" % path)
    cm = Section(data, path, "compare_models")
    compare = CompareSettings(
        omega_d_rad_s=cm.positive_list("omega_d_rad_s"), duration_s=cm.positive("duration_s"),
        error_window_s=cm.positive("error_window_s"),
        error_floor_rad=math.radians(cm.positive("error_floor_deg")))
    sy = Section(data, path, "sysid")
    window = sy.vector("steady_window_s", 2)
    bounds = sy.vector("inertia_bounds_kg_m2", 2)
    duration = sy.positive("duration_s")
    if not 0.0 <= window[0] < window[1] <= duration:
        raise ParameterError("%s:sysid.steady_window_s: expected 0 <= start < end <= duration_s" % path)
    if not 0.0 < bounds[0] < bounds[1]:
        raise ParameterError("%s:sysid.inertia_bounds_kg_m2: expected 0 < low < high" % path)
    sysid = SysidSettings(
        torques_nm=sy.positive_list("torques_nm"), duration_s=duration,
        sample_rate_hz=sy.positive("sample_rate_hz"),
        steady_window_s=tuple(window), inertia_bounds_kg_m2=tuple(bounds),
        settle_tolerance=sy.positive("settle_tolerance"), settle_window_s=sy.positive("settle_window_s"))
    pp = Section(data, path, "paper")
    table_w = pp.positive_list("table1_omega_d_rad_s")
    paper = PaperFigures(
        table1_omega_d_rad_s=table_w,
        table1_error_old_model_pct=tuple(pp.vector("table1_error_old_model_pct", len(table_w))),
        table1_error_new_model_pct=tuple(pp.vector("table1_error_new_model_pct", len(table_w))),
        yaw_quadratic_drag_nm_s2=pp.positive("yaw_quadratic_drag_nm_s2"),
        yaw_inertia_kg_m2=pp.positive("yaw_inertia_kg_m2"), sysid_tolerance=pp.positive("sysid_tolerance"))
    fw = Section(data, path, "firmware")
    firmware = FirmwareSettings(
        amplitudes=fw.positive_list("amplitudes"), random_commands=fw.integer("random_commands", 1),
        seed=fw.integer("seed", 0), small_u=fw.positive("small_u"),
        small_u_tolerance=fw.positive("small_u_tolerance"), omega_d_rad_s=fw.positive_list("omega_d_rad_s"))
    gn = Section(data, path, "gains")
    tr = Section(data, path, "trim")
    return AnalysisSettings(
        loop=loop, step=step, bode=bode, dive=dive,
        latency_cases=tuple(_latency_case(c, path, i) for i, c in enumerate(cases)),
        paper_jump_omega_d_rad_s=la.positive("paper_jump_omega_d_rad_s"),
        compare=compare, sysid=sysid, gains_omega_d_rad_s=gn.positive_list("omega_d_rad_s"),
        trim_rate_max_rad_s=grid(tr.positive("rate_max_min_rad_s"), tr.positive("rate_max_max_rad_s"),
                                 tr.positive("rate_max_step_rad_s")),
        paper=paper, firmware=firmware, integral=_integral_settings(data, path),
        robustness=_robustness_settings(data, path), source=path)
