"""Real ArduSub SITL flying our vehicle model: the firmware binary plus :mod:`json_physics`.

:class:`ArduSubSitl` starts ArduSub (built by ``scripts/build_ardusub.sh``) as
``ardusub -S -I N --model JSON:127.0.0.1 --speedup S --home LAT,LON,0,0 --defaults
FRAME.parm,OURS.parm -w`` in a scratch folder, and answers its physics frames with our
:class:`~brov2_hybrid.sim.plant.Plant` (the same model, options, current,
noise and thruster lag as ``brov2_sitl``). MAVLink is ArduSub's own, on TCP
``5760 + 10 N``; ArduSub boots only once a client has connected there.

Facts relied on (ArduPilot Sub-4.5 source): ``libraries/AP_HAL_SITL/SITL_cmdline.cpp``
(``-I`` adds 10 N to every port, ``-S`` lockstep, ``-w`` wipes the parameters,
``--defaults`` takes a comma-separated list), ``libraries/SITL/SIM_JSON.cpp`` (the physics
protocol), ``libraries/AP_Baro/AP_Baro_SITL.cpp`` (a Sub's pressure follows home altitude
minus the NED down position through ``SimpleUnderWaterAtmosphere``: home altitude 0 puts
the water surface at 0) and ArduSub's boot-time pressure calibration (the depth ArduSub
reports is relative to where it booted).

Entry points: ``python -m brov2_hybrid.sim.ardusub_sitl`` and the ``ardusub_sitl``
node of ``launch/hybrid_autopilot.launch sim:=ardusub``.
"""
import argparse
import dataclasses
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass


from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error, ParameterError
from brov2_hybrid.onboard.lua_script import install_script, load_onboard_settings
from brov2_hybrid.params import Section, load_controller_params, load_yaml
from brov2_hybrid.sim import config as sim_config
from brov2_hybrid.sim.command_line import add_physics_arguments, physics_from_args, serve
from brov2_hybrid.sim.json_physics import JsonPhysics, JsonPhysicsServer, json_port, mavlink_port
from brov2_hybrid.sim.lockstep import load_lockstep_config
from brov2_hybrid.sim.tether_state import reporter_for
from brov2_hybrid.sim.plant import Plant

LOG = logging.getLogger("ardusub_sitl")

#: Where scripts/build_ardusub.sh keeps its builds (``current`` links the latest).
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "brov2_hybrid", "ardusub")
BUILD_HINT = ("build it once with `make ardusub` (scripts/build_ardusub.sh: ArduPilot's source from "
              "../shared/ardupilot/, a source tree or a git URL; about 7 min on 2 cores)")


@dataclass
class SitlSettings:
    """The ``ardusub_sitl`` section of ``params/simulator.yaml``."""

    sim_rate_hz: int
    defaults: str
    extra_defaults: str
    onboard_nice: int = 0
    onboard_sim_rate_hz: int = 0


def load_sitl_settings(path=None):
    """Read :class:`SitlSettings` (file and key named in any error)."""
    path = sim_config.simulator_file(path)
    s = Section(load_yaml(path), path, "ardusub_sitl")
    rate = s.integer("sim_rate_hz", 1)
    extra = s.raw("extra_defaults")
    if extra is not None and not isinstance(extra, str):
        raise ParameterError("%s: expected a file name or null, got %r" % (s.key("extra_defaults"), extra))
    defaults = s.raw("defaults")
    if not isinstance(defaults, str) or not defaults:
        raise ParameterError("%s: expected a parameter file name, got %r" % (s.key("defaults"), defaults))
    return SitlSettings(sim_rate_hz=rate, defaults=defaults, extra_defaults=extra or "",
                        onboard_nice=s.integer("onboard_nice", -20, 19),
                        onboard_sim_rate_hz=s.integer("onboard_sim_rate_hz", 1))


def find_ardusub(explicit=None):
    """Path of the ArduSub SITL binary, or a Brov2Error saying how to get one.

    Looked up in ``explicit`` (a binary or a build folder), then ``$BROV2_ARDUSUB``, then
    ``$BROV2_ARDUSUB_CACHE/current`` (default ``~/.cache/brov2_hybrid/ardusub/current``).
    """
    candidates = [c for c in (explicit, os.environ.get("BROV2_ARDUSUB")) if c]
    cache = os.environ.get("BROV2_ARDUSUB_CACHE", DEFAULT_CACHE)
    candidates.append(os.path.join(cache, "current"))
    for candidate in candidates:
        path = os.path.join(candidate, "ardusub") if os.path.isdir(candidate) else candidate
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
        if candidate is explicit or candidate == os.environ.get("BROV2_ARDUSUB"):
            raise Brov2Error("no ArduSub SITL binary at %s; %s" % (candidate, BUILD_HINT))
    raise Brov2Error("no ArduSub SITL build in %s; %s" % (cache, BUILD_HINT))


def write_defaults(folder, settings, vehicle, binary, extra_params=None):
    """ArduSub's ``--defaults`` list: the frame's file, ours, and the run's own (path list), which
    ends with ``extra_params`` ({name: value}, e.g. SCR_ENABLE for the on-board script)."""
    frame_file = os.path.join(os.path.dirname(binary), settings.defaults)
    if not os.path.isfile(frame_file):
        raise Brov2Error("ArduSub defaults %s not found beside %s (ardusub_sitl.defaults in params/simulator.yaml)"
                         % (settings.defaults, binary))
    files = [frame_file]
    if settings.extra_defaults:
        extra = settings.extra_defaults
        extra = extra if os.path.isabs(extra) else paths.params_path(extra)
        if not os.path.isfile(extra):
            raise Brov2Error("ardusub_sitl.extra_defaults: %s does not exist" % extra)
        files.append(extra)
    run_file = os.path.join(folder, "brov2_run.parm")
    with open(run_file, "w") as f:
        f.write("# written by brov2_hybrid.sim.ardusub_sitl for this run\n")
        f.write("SIM_RATE_HZ %d\n" % settings.sim_rate_hz)
        f.write("FRAME_CONFIG %d\n" % vehicle.frame.frame_config)
        for name, value in sorted((extra_params or {}).items()):
            f.write("%s %r\n" % (name, value))
    files.append(run_file)
    return files


#: SITL_cmdline.cpp keeps the instance in a uint8_t: -I 273 runs as instance 17.
MAX_INSTANCE = 255


def free_instance(low=20, high=MAX_INSTANCE + 1, rng=None):
    """A SITL instance N in [low, high) whose ports are free now (TCP 5760/5762/5763 + 10 N,
    UDP 9002 + 10 N), drawn at random so that runs started together rarely meet."""
    import random
    import socket
    rng = rng or random.Random()
    for _ in range(50):
        n = rng.randrange(low, high)
        sockets = []
        try:
            for port in (mavlink_port(n), mavlink_port(n) + 2, mavlink_port(n) + 3):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sockets.append(s)
            s.bind(("127.0.0.1", json_port(n)))
            return n
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise Brov2Error("no free SITL instance in %d..%d" % (low, high - 1))


def _in_child(nice):
    """In the child before exec: :func:`_die_with_parent`, then add ``nice`` to its niceness (every
    thread ArduSub starts inherits it; a refusal, without the privilege, leaves it unchanged: the
    parent reads the niceness back and says so)."""
    def prepare():
        _die_with_parent()
        if nice:
            try:
                os.nice(nice)
            except OSError:
                pass
    return prepare


def _die_with_parent():
    """In the child before exec: SIGKILL when this process dies, however it dies (Linux
    prctl PR_SET_PDEATHSIG), so no ArduSub is left holding the SITL ports. SIGKILL: an
    ArduSub waiting for a physics frame that never comes does not act on SIGTERM."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


class ArduSubSitl(object):
    """ArduSub SITL (a child process) on our physics (served in :meth:`run`'s thread).

    Parameters
    ----------
    vehicle : Vehicle
    sim_options : SimOptions
    eta0 : array_like (6,)
        Start pose (north, east, down [m], roll, pitch, yaw [rad]).
    instance : int
        SITL instance N: MAVLink on TCP 5760 + 10 N, physics on UDP 9002 + 10 N.
    speedup : float
        ArduSub's ``--speedup`` (simulated seconds per wall second; lockstep either way).
    binary : str, optional
        ArduSub SITL binary (default :func:`find_ardusub`).
    params_file : str, optional
        Simulator YAML (default ``params/simulator.yaml``).
    extra_params : dict, optional
        More ArduSub parameters for this run ({name: value}).
    onboard : brov2_hybrid.onboard.lua_script.OnboardSettings, optional
        Install the on-board script (docs/onboard.md), generated for ``vehicle`` and
        ``controller_settings`` (default ``params/controller.yaml``), in ``scripts/`` of :attr:`folder`
        (ArduSub's working directory), with ``onboard.ardusub_params`` (SCR_ENABLE ...) before
        ``extra_params``; :attr:`script` is its path.
    """

    def __init__(self, vehicle, sim_options, eta0, instance=0, speedup=1.0, binary=None, params_file=None,
                 extra_params=None, onboard=None, controller_settings=None):
        self.vehicle = vehicle
        self.extra_params = dict(onboard.ardusub_params if onboard is not None else {})
        self.extra_params.update(extra_params or {})
        self.settings = load_sitl_settings(params_file)
        if onboard is not None and self.settings.onboard_sim_rate_hz:
            # the on-board script: physics and SITL frames at onboard_sim_rate_hz (params/simulator.yaml says why)
            rate = self.settings.onboard_sim_rate_hz
            self.settings = dataclasses.replace(self.settings, sim_rate_hz=rate)
            sim_options = dataclasses.replace(sim_options, dt_s=1.0 / rate)
            LOG.info("on-board script: physics and SIM_RATE_HZ at %d Hz (ardusub_sitl.onboard_sim_rate_hz)", rate)
        expected_rate = 1.0 / sim_options.dt_s
        if abs(self.settings.sim_rate_hz - expected_rate) > 1e-6 * expected_rate:
            LOG.warning("ardusub_sitl.sim_rate_hz %d differs from physics.rate_hz %g: frames are rounded "
                        "to whole physics steps", self.settings.sim_rate_hz, expected_rate)
        self.binary = find_ardusub(binary)
        if not (isinstance(instance, int) and 0 <= instance <= MAX_INSTANCE):
            raise Brov2Error("SITL instance: expected 0..%d (ArduSub keeps it in 8 bits), got %r"
                             % (MAX_INSTANCE, instance))
        self.instance = instance
        self.speedup = float(speedup)
        link = sim_config.load_link_config(params_file)
        self.home = "%.7f,%.7f,0,0" % (link.home_lat_deg, link.home_lon_deg)
        self.plant = Plant(vehicle, sim_options)
        self.plant.reset(eta=eta0)
        self.physics = JsonPhysics(self.plant)
        self.server = JsonPhysicsServer(self.physics, "127.0.0.1", json_port(self.instance))
        self.mavlink_port = mavlink_port(self.instance)
        self.folder = tempfile.mkdtemp(prefix="brov2_ardusub_%d_" % self.instance)
        self.script = None
        if onboard is not None:
            try:
                self.script = install_script(self.folder, vehicle, controller_settings or load_controller_params(),
                                             onboard)
            except Exception:
                shutil.rmtree(self.folder, ignore_errors=True)
                raise
        self.process = None
        self._pump = None

    def command(self):
        """ArduSub's command line (list)."""
        defaults = write_defaults(self.folder, self.settings, self.vehicle, self.binary, self.extra_params)
        return [self.binary, "-S", "-w", "-I", str(self.instance), "--model", "JSON:127.0.0.1",
                "--speedup", repr(self.speedup), "--home", self.home, "--defaults", ",".join(defaults)]

    def start(self):
        """Start ArduSub; its output goes to this module's log, prefixed ``ardusub:``."""
        cmd = self.command()
        LOG.info("starting %s (MAVLink tcp:127.0.0.1:%d, physics udp:%d, folder %s)", " ".join(cmd),
                 self.mavlink_port, self.server.port, self.folder)
        if self.script is not None:
            LOG.info("the on-board script %s is installed (%s)", self.script,
                     ", ".join("%s %g" % kv for kv in sorted(self.extra_params.items())))
        nice = self.settings.onboard_nice if self.script is not None else 0
        self.process = subprocess.Popen(cmd, cwd=self.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, universal_newlines=True, bufsize=1,
                                        preexec_fn=_in_child(nice))
        if nice:
            try:
                got = os.getpriority(os.PRIO_PROCESS, self.process.pid) - os.nice(0)
            except OSError:
                got = None
            if got == nice:
                LOG.info("ArduSub runs at niceness %+d relative to us (ardusub_sitl.onboard_nice: the script's "
                         "thread keeps its loop period on a busy machine, as on a board that runs it in real time)",
                         nice)
            else:
                LOG.warning("ardusub_sitl.onboard_nice %+d not applied (no privilege?): on a busy machine the "
                            "script's loop may stall (docs/onboard.md)", nice)
        self._pump = threading.Thread(target=self._pump_output, name="ardusub-output", daemon=True)
        self._pump.start()

    def _pump_output(self):
        for line in self.process.stdout:
            line = line.rstrip()
            if line and not line.startswith("No JSON sensor message received"):
                LOG.info("ardusub: %s", line)

    def run(self, duration_s=None):
        """Start ArduSub if not started, serve physics frames until it exits, :meth:`stop`
        or ``duration_s``; returns ArduSub's exit code (0 while it runs or when a signal
        stopped it)."""
        if self.process is None:
            self.start()
        watcher = threading.Thread(target=self._watch_process, name="ardusub-watch", daemon=True)
        watcher.start()
        self.server.run(duration_s)
        code = self.returncode
        return 0 if code in (None, 0, -signal.SIGTERM, -signal.SIGINT) else code

    def _watch_process(self):
        code = self.process.wait()
        if code in (-signal.SIGINT, -signal.SIGTERM):
            # roslaunch / Ctrl-C signal the whole process group: ArduSub stops with us.
            LOG.info("ArduSub SITL stopped (signal %d)", -code)
        elif not self.server.stopping:
            LOG.error("ArduSub SITL exited (code %s)", code)
        self.server.stop()

    def stop(self):
        """Stop serving (from a signal handler or another thread)."""
        self.server.stop()

    def close(self, timeout_s=2.0):
        """Stop ArduSub and release the port and the scratch folder."""
        LOG.info("stopped at t = %.3f s after %d physics frames", self.plant.t_s, self.physics.frames)
        if self.plant.tether is not None:
            LOG.info(self.plant.tether.summary_line())
        self.server.stop()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.server.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def returncode(self):
        """ArduSub's exit code (None while it runs)."""
        return None if self.process is None else self.process.poll()


def build_arg_parser():
    """The ``ardusub_sitl`` command line: the physics options (vehicle, model, start pose, ...),
    ``--instance`` (ports +10 N), ``--ardusub`` (binary or build folder), ``--speedup``, ``--onboard``
    (the on-board script installed) and ``--lockstep``."""
    parser = argparse.ArgumentParser(
        prog="ardusub_sitl",
        description="Real ArduSub SITL (scripts/build_ardusub.sh) flying brov2_hybrid's vehicle model "
                    "through ArduPilot's JSON physics interface. MAVLink: ArduSub's own, tcp:127.0.0.1:5760+10N.")
    add_physics_arguments(parser)
    parser.add_argument("--instance", "-I", type=int, default=0, help="SITL instance N (ports +10 N; default 0)")
    parser.add_argument("--ardusub", metavar="PATH", help="ArduSub SITL binary or build folder "
                                                          "(default: $BROV2_ARDUSUB, else the build cache)")
    parser.add_argument("--speedup", type=float, default=1.0, help="ArduSub --speedup (default 1)")
    parser.add_argument("--onboard", action="store_true",
                        help="install the on-board Lua script (brov2_hybrid.onboard, docs/onboard.md) in ArduSub's "
                             "scripts folder and set params/onboard.yaml's ardusub_params (SCR_ENABLE ...)")
    parser.add_argument("--lockstep", action="store_true",
                        help="pace the physics (so ArduSub's clock) by the controller's commands: at most "
                             "lockstep.ardusub_max_lead_s ahead (needs ROS: rosrun brov2_hybrid ardusub_sitl; "
                             "docs/simulator.md 'Lockstep')")
    return parser


def sitl_from_args(args, controller=None):
    """Build an :class:`ArduSubSitl` from parsed command-line ``args``. ``controller``: with
    ``--lockstep``, where the controller's progress comes from, an object with ``follow()`` and
    ``latest_s()`` (the ROS shell's :class:`~brov2_hybrid.sim.controller_commands.ControllerCommands`);
    raises Brov2Error when ``--lockstep`` has none."""
    if args.lockstep and args.onboard:
        raise Brov2Error("--onboard with --lockstep: the physics would wait for the topside's thruster commands, "
                         "which the on-board script does not send; leave --lockstep out")
    if args.lockstep and controller is None:
        raise Brov2Error("--lockstep: the controller's commands arrive over ROS; run it as the ROS node "
                         "(rosrun brov2_hybrid ardusub_sitl --lockstep, or the launch files)")
    vehicle, options, eta = physics_from_args(args)
    onboard = None
    if args.onboard:
        onboard = load_onboard_settings()
    sitl = ArduSubSitl(vehicle, options, eta, instance=args.instance, speedup=args.speedup, binary=args.ardusub,
                       params_file=args.params, onboard=onboard)
    if args.lockstep:
        config = load_lockstep_config(args.params)
        controller.follow()
        sitl.physics.pace = controller.latest_s
        sitl.physics.max_lead_s = config.ardusub_max_lead_s
        sitl.physics.pace_timeout_s = config.timeout_s
        LOG.info("lockstep: the physics runs at most %.3f s of vehicle time ahead of the newest command on %s "
                 "(time-out %.1f s)", config.ardusub_max_lead_s, controller.command_topic, config.timeout_s)
    sitl.physics.tether_report = reporter_for(controller, options, args.params)
    return sitl


def main(argv=None, controller=None):
    """Command-line entry point; returns ArduSub's exit status (2: could not start). ``controller``:
    see :func:`sitl_from_args` (the ROS shell passes one for ``--lockstep``)."""
    return serve(build_arg_parser().parse_args(argv), lambda args: sitl_from_args(args, controller), LOG)


if __name__ == "__main__":
    sys.exit(main())
