"""Where and how the experiments run (:class:`Context`) and how they write their tables.

Every ``*_experiment(ctx, ...)`` function (the ``*_experiment(s)`` modules of this
package) runs its jobs (:mod:`brov2_hybrid.analysis.jobs`) through ``ctx.runner``
(local processes or Dask), writes ``<name>.csv`` (:func:`write_csv`) and figures into
``ctx.out_dir`` and returns a dict that :mod:`brov2_hybrid.analysis.report` turns
into REPORT.md.

Angles are rad inside and deg in CSV columns named ``*_deg``; times s; rates rad/s.
"""
import csv
import os

import numpy as np

from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.params import load_controller_params
from brov2_hybrid.analysis import lti
from brov2_hybrid.analysis.runner import Runner
from brov2_hybrid.analysis.settings import load_analysis_settings
from brov2_hybrid.dofs import ANGULAR_DOF_NAMES, LINEAR_DOF_NAMES

#: Angular axes (closed loop) and linear DOFs (open loop), in the order of eta2 / u.
AXES = ANGULAR_DOF_NAMES
LINEAR = LINEAR_DOF_NAMES
#: Index of yaw among :data:`AXES`.
YAW = 2


class Context(object):
    """Where and how experiments run: settings, output folder, runner, loop settings."""

    def __init__(self, settings=None, out_dir="analysis_out", runner=None, loop=None):
        self.settings = settings or load_analysis_settings()
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.runner = runner or Runner()
        self.loop = loop or self.settings.loop
        self.vehicle = load_vehicle(self.loop.vehicle)
        self.controller_params = load_controller_params()
        self.rc_map = self.vehicle.rc_map
        self._controllers = {}

    def path(self, name):
        """Path of the output file ``name`` inside :attr:`out_dir`."""
        return os.path.join(self.out_dir, name)

    def controller(self, omega_d_rad_s):
        """Controller at omega_d (cached) for gains and LTI predictions."""
        key = round(float(omega_d_rad_s), 9)
        if key not in self._controllers:
            self._controllers[key] = lti.controller_for(key, self.vehicle, self.controller_params)
        return self._controllers[key]


def write_csv(path, header, rows):
    """Write ``rows`` (sequences) under ``header``; floats with 6 significant digits."""
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(header)
        for row in rows:
            w.writerow([("%.6g" % v) if isinstance(v, (float, np.floating)) else v for v in row])
    return path
