"""The stock compensation in plain numpy: the reference the compiled search is held to.

:func:`reference_stock_compensation` is :meth:`~brov2_hybrid.vehicle.firmware_output.
StockCompensatedOutput.u_to_send`'s search written in plain numpy (per-command slicing,
``np.clip``, ``np.linalg.lstsq``). Tests and ``make bench`` compare the fast path with it
(same RC values, and its cost); nothing flies it.
"""
import numpy as np

from brov2_hybrid.vehicle.allocation import HORIZONTAL_DOFS, VERTICAL_DOFS
from brov2_hybrid.vehicle.firmware_output import TIE_BREAK


def reference_stock_compensation(stage, u):
    """The stock compensation as first written: the baseline of :class:`StockCompensatedOutput`.

    The same search as :meth:`StockCompensatedOutput.u_to_send` (``stage`` gives the
    vehicle, the target and the mixer model), written with per-command slicing,
    ``np.clip`` and ``np.linalg.lstsq``. Kept so that tests and ``make bench`` compare the
    fast path with it (same RC values); nothing flies it.

    Parameters
    ----------
    stage : StockCompensatedOutput
    u : ndarray (6,) in [-1, 1]

    Returns
    -------
    ndarray (6,): the u to put on the channels (on the 1/400 grid)
    """
    if not np.any(u):
        return u
    vehicle = stage.vehicle
    table = vehicle.table
    m_target = stage.target_mixer.normalized(u)
    f_target = table.force_from_pwm(np.rint(table.pwm_from_normalized(m_target)))
    tau_req = vehicle.T @ f_target if stage.target == "algorithm2" else vehicle.tau_max * u
    w = 1.0 / vehicle.tau_max
    f_now = f_target.copy()
    u_out = np.zeros(6)
    T_hat_t = vehicle.T_hat.T
    for dofs in (HORIZONTAL_DOFS, VERTICAL_DOFS):
        dofs = list(dofs)
        motors = np.nonzero(np.any(T_hat_t[:, dofs] != 0.0, axis=1))[0]
        A = T_hat_t[np.ix_(motors, dofs)]
        A_pinv = np.linalg.pinv(A)
        others = np.ones(vehicle.T.shape[1], dtype=bool)
        others[motors] = False
        T_g = vehicle.T[:, motors]
        tau_rest = vehicle.T[:, others] @ f_now[others]
        v = A_pinv @ m_target[motors]
        for _ in range(stage.newton_steps):
            m = np.clip(A @ v, -1.0, 1.0)
            pwm = table.pwm_from_normalized(m)
            h = 0.5 * float(np.min(np.diff(table.pwm_us)))
            side = np.where(m >= 0.0, 1.0, -1.0)
            slope = (table.force_from_pwm(pwm + side * h) - table.force_from_pwm(pwm)) / (side * h) \
                * table.half_range_us
            if not np.any(slope[np.abs(m) > 0.0] > 0.0):
                break
            J = (T_g[dofs] * slope) @ A
            r = tau_req[dofs] - T_g[dofs] @ table.force_from_pwm(table.pwm_from_normalized(m)) - tau_rest[dofs]
            step = np.linalg.lstsq(J, r, rcond=None)[0]
            v_new = v + step
            if not np.all(np.isfinite(v_new)):
                break
            v = v_new
        v = np.clip(v, -1.0, 1.0)
        peak = float(np.max(np.abs(A @ v)))
        if peak > 1.0:
            v = v / peak
        lo = np.floor(v * stage.half_range_us) / stage.half_range_us
        cand = np.clip(np.vstack([lo + stage.corners / stage.half_range_us,
                                  np.rint(u[dofs] * stage.half_range_us) / stage.half_range_us]), -1.0, 1.0)
        cand_u = np.zeros((len(cand), 6))
        cand_u[:, dofs] = cand
        pwm = np.clip(stage.vehicle_mixer.motor_pwm(cand_u)[:, motors], stage.pwm_min_us, stage.pwm_max_us)
        forces = table.force_from_pwm(pwm)
        err = (forces @ T_g.T + tau_rest - tau_req) * w
        score = np.einsum("ij,ij->i", err, err) + TIE_BREAK * np.einsum("ij,ij->i", cand, cand)
        best = int(np.argmin(score))
        u_out[dofs] = cand[best]
        f_now[motors] = forces[best]
    return u_out
