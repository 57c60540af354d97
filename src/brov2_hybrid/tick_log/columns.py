"""Where a tick's values go in a row of the in-process loop's log: the index lists the tick loops share.

A row holds :data:`~brov2_hybrid.tick_log.logfile.NUMERIC_COLUMNS`; these lists give the
positions of each group of columns in it (desired attitude, attitude, rates, linear
commands, tau, u, RC channels, motor PWMs, the tether's pull).
"""
from brov2_hybrid.tick_log.logfile import (ATTITUDE_COLUMNS, DESIRED_COLUMNS, LINEAR_CMD_COLUMNS, NUMERIC_COLUMNS,
                                             PWM_COLUMNS, RATE_COLUMNS, RC_COLUMNS, TAU_COLUMNS, TETHER_COLUMNS,
                                             U_COLUMNS)

#: Column name -> index in a row.
COL = {name: k for k, name in enumerate(NUMERIC_COLUMNS)}
DESIRED = [COL[c] for c in DESIRED_COLUMNS]
ACTUAL = [COL[c] for c in ATTITUDE_COLUMNS]
RATES = [COL[c] for c in RATE_COLUMNS]
LINEAR = [COL[c] for c in LINEAR_CMD_COLUMNS]
TAU = [COL[c] for c in TAU_COLUMNS]
U = [COL[c] for c in U_COLUMNS]
RC = [COL[c] for c in RC_COLUMNS]
PWM = [COL[name] for name in PWM_COLUMNS]   # the 8 servo outputs; past the last motor: 0
TETHER = [COL[c] for c in TETHER_COLUMNS]   # the simulated tether's pull [N, NED]; NaN without one
