"""Command-line pieces shared by the two programs that serve our vehicle model.

``brov2_sitl`` (:mod:`brov2_hybrid.sim.simulator`: our simulated firmware on MAVLink) and
``ardusub_sitl`` (:mod:`brov2_hybrid.sim.ardusub_sitl`: real ArduSub on ArduPilot's JSON
physics interface) take the same vehicle, physics options and start pose, and stop the
same way on SIGINT / SIGTERM.
"""
import dataclasses
import logging
import signal

import numpy as np

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.sim import config as sim_config
from brov2_hybrid.sim.config import MODELS, THRUSTER_LAGS, load_sim_options
from brov2_hybrid.vehicle.vehicle_file import add_vehicle_argument, load_vehicle

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_physics_arguments(parser):
    """--vehicle, --params, --model, --thruster-lag, --current-ned-m-s, --noise, --tether, start pose, --duration-s."""
    add_vehicle_argument(parser)
    parser.add_argument("--params", metavar="YAML", help="simulator parameter file (default params/simulator.yaml)")
    parser.add_argument("--model", choices=MODELS, help="vehicle model (default: physics.model in the params file)")
    parser.add_argument("--thruster-lag", choices=THRUSTER_LAGS, help="override physics.thruster_lag")
    parser.add_argument("--current-ned-m-s", type=float, nargs=3, metavar=("N", "E", "D"),
                        help="constant ocean current [m/s]")
    parser.add_argument("--noise", action="store_true", help="enable sensor noise (noise section)")
    parser.add_argument("--tether", action="store_true",
                        help="a tether from the base to the vehicle (simulator.yaml section tether; docs/simulator.md)")
    parser.add_argument("--initial-attitude-deg", type=float, nargs=3, metavar=("ROLL", "PITCH", "YAW"))
    parser.add_argument("--initial-depth-m", type=float, metavar="DEPTH")
    parser.add_argument("--duration-s", type=float, help="stop after this many simulated seconds")
    parser.add_argument("--log-level", default="INFO", choices=LOG_LEVELS)
    return parser


def physics_from_args(args):
    """(vehicle, SimOptions, start pose eta (6,)) from the arguments of :func:`add_physics_arguments`."""
    options = load_sim_options(args.params)
    changes = {}
    if args.model:
        changes["model"] = args.model
    if args.thruster_lag:
        changes["thruster_lag"] = args.thruster_lag
    if args.current_ned_m_s:
        changes["current_ned_m_s"] = np.array(args.current_ned_m_s)
    if args.noise:
        changes["noise_enabled"] = True
    if args.tether:
        if options.tether is None:
            raise Brov2Error("--tether: the simulator parameter file has no tether section")
        changes["tether"] = options.tether.with_changes(enabled=True)
    options = dataclasses.replace(options, **changes).validated()
    start = sim_config.load_initial_state(args.params)
    depth = start.depth_m if args.initial_depth_m is None else args.initial_depth_m
    attitude = start.attitude_deg if args.initial_attitude_deg is None else np.array(args.initial_attitude_deg)
    return load_vehicle(args.vehicle), options, sim_config.start_eta(depth, attitude)


def serve(args, build, log):
    """Configure logging, ``build(args)`` the server, run it until SIGINT / SIGTERM or
    ``args.duration_s``, close it. Returns 2 when it cannot start, else ``server.run``'s
    result (None counts as 0)."""
    logging.basicConfig(level=getattr(logging, args.log_level),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        server = build(args)
    except (Brov2Error, OSError) as exc:
        log.error("cannot start: %s", exc)
        return 2

    def _stop(signum, frame):
        log.info("signal %d: stopping", signum)
        server.stop()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = server.run(args.duration_s)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.close()
    return int(result or 0)
