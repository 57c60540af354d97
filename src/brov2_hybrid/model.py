"""Assembles the vehicle's allocation, thrust table and mixers from parameter files.

One place builds T, T-dagger, tau_max, the thrust table and both mixers so the nodes,
the simulator and the analysis tools use identical objects.
"""
from dataclasses import dataclass

import numpy as np

from brov2_hybrid import allocation, params
from brov2_hybrid.mixers import Mixer
from brov2_hybrid.thrust_table import ThrustTable


@dataclass
class VehicleSetup:
    """Everything derived from the parameter files for one vehicle."""

    vehicle: params.VehicleParams
    thrusters: params.ThrusterParams
    T: np.ndarray          # (6, 8) allocation matrix
    T_pinv: np.ndarray     # (8, 6) pseudo-inverse
    T_hat: np.ndarray      # (6, 8) ArduSub heuristic matrix
    table: ThrustTable
    force_limit_n: float
    tau_max: np.ndarray    # (6,)

    def mixer(self, kind="quantitative"):
        """Algorithm 2 ('quantitative') or Algorithm 1 ('stock') bound to this vehicle."""
        return Mixer(kind, self.T_pinv, self.tau_max, self.table, self.T_hat)


def load_setup(vehicle_file=None, thruster_file=None):
    """Build a :class:`VehicleSetup` from ``params/`` (or the given files)."""
    vehicle = params.load_vehicle_params(vehicle_file)
    thrusters = params.load_thruster_params(thruster_file)
    T = allocation.allocation_matrix(vehicle.thruster_positions_m, vehicle.thruster_directions)
    table = ThrustTable.from_params(thrusters)
    limit = thrusters.force_limit_n if thrusters.force_limit_n is not None else table.symmetric_limit_n
    return VehicleSetup(
        vehicle=vehicle, thrusters=thrusters, T=T, T_pinv=allocation.pseudo_inverse(T),
        T_hat=allocation.heuristic_matrix(thrusters.ardusub_factors), table=table,
        force_limit_n=float(limit),
        tau_max=allocation.tau_max_from_limit(T, vehicle.thruster_directions, limit))
