"""Yaw system identification from open-loop constant-torque runs (paper Sec. 3, Eq. 10-14).

1. Drag (Sec. 3.1): for each run the steady yaw rate r_f is the mean of r over a window
   (2.5-4.5 s in the paper); N = N_r r_f + N_r|r| r_f |r_f| (Eq. 11) is fitted to all runs
   by linear least squares.
2. Inertia (Sec. 3.2): with the drag fixed and the added mass N_rdot known, each run's
   unsteady part t_0 <= t <= t_f is compared with the solution of
   r_dot = (N - N_r r - N_r|r| r|r|) / (I_zz + N_rdot), r(t_0) = r_0 (Eq. 12-14), and I_zz
   is the value minimising the RMSE over all runs (a grid, then a bounded refinement).
   t_0 is the inflection point of r(t) (largest acceleration: thrust fully ramped up),
   t_f the left edge of the first sliding window whose mean |r - r_f| is within the
   tolerance of |r_f|.

Runs come from the vehicle model (:func:`simulate_runs`), from log CSVs
(:func:`run_from_log`) or from a rosbag (:func:`run_from_bag`). Body FRD, r in rad/s,
N in N m, t in s from the torque onset.
"""
import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize

from brov2_hybrid.errors import Brov2Error, InputDataError
from brov2_hybrid.tick_log.logfile import read_log
from brov2_hybrid.vehicle.mixers import QUANTITATIVE

YAW = 5


@dataclass
class YawRun:
    """One constant-torque run: t_s (n,), r_rad_s (n,) from the onset, torque_nm, source."""

    t_s: np.ndarray
    r_rad_s: np.ndarray
    torque_nm: float
    source: str = ""


@dataclass
class DragFit:
    """Result of :func:`fit_drag` (Eq. 11): N_r [N m s/rad], N_r|r| [N m s^2/rad^2], and the runs'
    torques [N m] and steady yaw rates [rad/s]."""

    linear_nm_s: float        # N_r
    quadratic_nm_s2: float    # N_r|r|
    torques_nm: np.ndarray
    steady_rates_rad_s: np.ndarray

    def torque(self, r):
        """Drag moment N_r r + N_r|r| r|r| [N m] at yaw rate(s) ``r`` [rad/s]."""
        r = np.asarray(r, dtype=float)
        return self.linear_nm_s * r + self.quadratic_nm_s2 * r * np.abs(r)


@dataclass
class InertiaFit:
    """Result of the inertia fit (Eq. 12-14): I_zz [kg m^2] and its RMSE [rad/s], the (t0, tf, r0)
    window of each run [s, s, rad/s], and the grid searched with its RMSE."""

    inertia_kg_m2: float      # I_zz
    rmse_rad_s: float
    windows: list             # (t0, tf, r0) per run
    grid_kg_m2: np.ndarray
    grid_rmse: np.ndarray


def steady_rate(run, window_s):
    """Mean yaw rate over ``window_s`` = (start, end) [s] (Sec. 3.1)."""
    inside = (run.t_s >= window_s[0]) & (run.t_s <= window_s[1])
    if np.count_nonzero(inside) < 2:
        raise Brov2Error("%s: fewer than 2 samples in the steady window %s s" % (run.source or "run", list(window_s)))
    return float(np.mean(run.r_rad_s[inside]))


def fit_drag(runs, window_s):
    """Least-squares N_r and N_r|r| from the steady rates of ``runs`` (Eq. 11)."""
    if len(runs) < 2:
        raise Brov2Error("fit_drag: expected at least 2 runs with different torques, got %d" % len(runs))
    r = np.array([steady_rate(run, window_s) for run in runs])
    n = np.array([run.torque_nm for run in runs])
    A = np.column_stack([r, r * np.abs(r)])
    coef, _, rank, _ = np.linalg.lstsq(A, n, rcond=None)
    if rank < 2:
        raise Brov2Error("fit_drag: the runs do not determine both coefficients (need distinct torques)")
    return DragFit(float(coef[0]), float(coef[1]), n, r)


def unsteady_window(run, r_f, tolerance, window_s):
    """(t_0, t_f, r_0) of Eq. 14 for one run (see the module docstring)."""
    t, r = run.t_s, run.r_rad_s
    acc = np.gradient(r, t) * math.copysign(1.0, r_f)
    reach = np.nonzero(np.abs(r) >= abs(r_f))[0]
    end = int(reach[0]) if reach.size else len(t) - 1
    k0 = int(np.argmax(acc[: max(end, 1)]))
    dt = float(np.median(np.diff(t)))
    width = max(1, int(round(window_s / dt)))
    err = np.abs(r - r_f)
    mean_err = np.convolve(err, np.ones(width) / width, mode="valid")
    ok = np.nonzero(mean_err[k0:] <= tolerance * abs(r_f))[0]
    kf = k0 + int(ok[0]) if ok.size else len(t) - 1
    kf = max(kf, k0 + 2)
    return float(t[k0]), float(t[min(kf, len(t) - 1)]), float(r[k0])


def simulate_rate(t_eval, torque_nm, total_inertia, drag, t0, r0):
    """Solution of Eq. 12 from r(t0) = r0 at the times ``t_eval`` (>= t0)."""
    def rhs(_, y):
        return [(torque_nm - drag.torque(y[0])) / total_inertia]
    sol = integrate.solve_ivp(rhs, (t0, float(t_eval[-1])), [r0], t_eval=t_eval, rtol=1e-8, atol=1e-10)
    if not sol.success:
        raise Brov2Error("simulate_rate: integration failed (%s)" % sol.message)
    return sol.y[0]


def fit_inertia(runs, drag, added_mass, bounds, tolerance, window_s, n_grid=40):
    """I_zz minimising the RMSE of Eq. 12's solution over the runs' unsteady windows."""
    windows, segments = [], []
    for run, r_f in zip(runs, drag.steady_rates_rad_s):
        t0, tf, r0 = unsteady_window(run, r_f, tolerance, window_s)
        inside = (run.t_s >= t0) & (run.t_s <= tf)
        windows.append((t0, tf, r0))
        segments.append((run.t_s[inside], run.r_rad_s[inside], run.torque_nm, t0, r0))

    def rmse(inertia):
        sq, n = 0.0, 0
        for t, r, torque, t0, r0 in segments:
            model = simulate_rate(t, torque, inertia + added_mass, drag, t0, r0)
            sq += float(np.sum((model - r) ** 2))
            n += len(t)
        return math.sqrt(sq / n)

    lo, hi = bounds
    grid = np.linspace(lo, hi, n_grid)
    values = np.array([rmse(i) for i in grid])
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, n_grid - 1)]
    best = optimize.minimize_scalar(rmse, bounds=(a, b), method="bounded", options={"xatol": 1e-5})
    return InertiaFit(float(best.x), float(best.fun), windows, grid, values)


def run_from_log(path):
    """A :class:`YawRun` from a brov2_hybrid log CSV: r_rad_s and the commanded tau_n_nm.

    The run starts at the first row with a non-zero yaw torque; the torque is the median
    of tau_n_nm from there on.
    """
    log = read_log(path)
    tau = log["tau_n_nm"]
    on = np.nonzero(np.abs(tau) > 0.0)[0]
    if on.size == 0:
        raise InputDataError("%s: column 'tau_n_nm' is zero throughout; expected a constant-torque run" % path)
    k = int(on[0])
    t = log["time_s"][k:] - log["time_s"][k]
    return YawRun(t, log["r_rad_s"][k:], float(np.median(tau[k:])), path)


def run_from_bag(path, torque_nm=None, imu_topic="/mavros/imu/data", torque_topic=None):
    """A :class:`YawRun` from a rosbag: yaw rate from a sensor_msgs/Imu topic (ENU/FLU,
    so r_FRD = -angular_velocity.z), torque from a geometry_msgs/WrenchStamped topic in
    base_link_frd (torque.z; the run starts at its first non-zero value) or ``torque_nm``
    (the run starts at the first IMU message)."""
    try:
        import rosbag
    except ImportError:
        raise Brov2Error("reading %s needs the rosbag Python package (ROS 1); install python3-rosbag" % path)
    times, rates, onset, torques = [], [], None, []
    with rosbag.Bag(path) as bag:
        topics = [imu_topic] + ([torque_topic] if torque_topic else [])
        for topic, msg, stamp in bag.read_messages(topics=topics):
            t = (msg.header.stamp if msg.header.stamp.to_sec() > 0 else stamp).to_sec()
            if topic == imu_topic:
                times.append(t)
                rates.append(-msg.angular_velocity.z)
            elif abs(msg.wrench.torque.z) > 0.0:
                onset = t if onset is None else onset
                torques.append(msg.wrench.torque.z)
    if not times:
        raise InputDataError("%s: no messages on %s" % (path, imu_topic))
    t, r = np.array(times), np.array(rates)
    if torque_topic:
        if onset is None:
            raise InputDataError("%s: no non-zero torque on %s" % (path, torque_topic))
        torque = float(np.median(torques))
    elif torque_nm is None:
        raise Brov2Error("run_from_bag: give torque_nm or torque_topic")
    else:
        onset, torque = t[0], float(torque_nm)
    keep = t >= onset
    return YawRun(t[keep] - onset, r[keep], torque, path)


def simulate_runs(torques_nm, duration_s, sample_period_s, vehicle=None, sim_options=None, mixer_kind=QUANTITATIVE):
    """Constant yaw-torque runs in the vehicle model, through the RC channel and the mixer.

    The yaw command goes to the motors as the firmware sends it: RC channel PWMs, then
    :func:`brov2_hybrid.vehicle.mixers.motor_pwm_from_rc` (u -> mixer -> whole-microsecond PWMs).

    The torque recorded for each run is the yaw torque the thrusters actually produce
    (T @ thruster forces, mean over the second half), which differs from the request by
    the PWM quantisation; r is sampled every ``sample_period_s``.
    """
    from brov2_hybrid.sim.plant import Plant
    from brov2_hybrid.sim.config import load_sim_options
    from brov2_hybrid.vehicle.mixers import motor_pwm_from_rc
    from brov2_hybrid.vehicle.vehicle_file import load_vehicle
    vehicle = vehicle or load_vehicle()
    options = sim_options if sim_options is not None else load_sim_options()
    rc = vehicle.rc_map
    mixer = vehicle.mixer(mixer_kind)
    runs = []
    n = int(round(duration_s / sample_period_s))
    for torque in torques_nm:
        plant = Plant(vehicle, options)
        plant.reset(eta=np.zeros(6), nu=np.zeros(6), t_s=0.0)
        u = np.zeros(6)
        u[YAW] = torque / vehicle.tau_max[YAW]
        if abs(u[YAW]) > 1.0:
            raise Brov2Error("torques_nm: %g N m exceeds tau_max %.2f N m" % (torque, vehicle.tau_max[YAW]))
        plant.set_motor_pwm(motor_pwm_from_rc(rc.pwm_from_u(u), rc, mixer, vehicle.thrusters.pwm_min_us,
                                           vehicle.thrusters.pwm_max_us))
        t = np.zeros(n + 1)
        r = np.zeros(n + 1)
        applied = np.zeros(n + 1)
        for k in range(n + 1):
            if k:
                plant.advance(sample_period_s)
            t[k] = k * sample_period_s
            r[k] = plant.nu[YAW]
            applied[k] = (vehicle.T @ plant.thruster_forces_n())[YAW]
        runs.append(YawRun(t, r, float(np.mean(applied[n // 2:])), "simulated %g N m" % torque))
    return runs
