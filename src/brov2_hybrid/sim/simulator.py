"""brov2_sitl: the vehicle model + simulated ArduSub firmware behind a MAVLink endpoint.

One thread, one loop: physics (:class:`~brov2_hybrid.sim.plant.Plant`) and
firmware (:class:`~brov2_hybrid.sim.firmware.Firmware`) advance on simulated time;
simulated time follows the wall clock times ``speedup``; between events (telemetry due,
an override expiring, the failsafe, delayed traffic) the loop sleeps in ``select`` on
the sockets, and when it wakes it catches the physics up in whole firmware ticks. The
result is the same as running the firmware loop at every tick, because nothing changes
the motor outputs between events.

Entry points: ``python -m brov2_hybrid.sim`` and ``rosrun brov2_hybrid brov2_sitl``
(both call :func:`main`).
"""
import argparse
import dataclasses
import logging
import math
import sys
import time

from pymavlink.dialects.v20 import ardupilotmega as mavlink

from brov2_hybrid.link import mavlink_signing
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.vehicle.mixers import KINDS as MIXER_KINDS
from brov2_hybrid.vehicle.vehicle_file import load_vehicle
from brov2_hybrid.sim import config as sim_config
from brov2_hybrid.sim.command_line import add_physics_arguments, physics_from_args, serve
from brov2_hybrid.sim.config import MODELS, load_sim_options
from brov2_hybrid.sim.firmware import Firmware, add_delay_param
from brov2_hybrid.sim.lockstep import LockstepGate, load_lockstep_config
from brov2_hybrid.sim.tether_state import reporter_for
from brov2_hybrid.sim.param_table import PARAM_INT8, PARAM_INT16, PARAM_REAL32, ParamDef
from brov2_hybrid.sim.mavlink_server import MavlinkServer
from brov2_hybrid.sim.mavlink_protocol import MavlinkProtocol
from brov2_hybrid.sim import telemetry
from brov2_hybrid.sim.telemetry import TelemetryBuilder
from brov2_hybrid.sim.plant import Plant

LOG = logging.getLogger("brov2_sitl")

#: Longest wait in select [s, wall]: how quickly stop() / SIGINT take effect.
MAX_WAIT_S = 0.1
#: Falling this far behind the wall clock [s, wall] re-anchors the clock (with a warning).
MAX_BEHIND_WALL_S = 1.0
#: While a lockstep step waits: a HEARTBEAT this often [s, wall] (links time out on the wall clock).
HELD_HEARTBEAT_S = 1.0
#: Most simulated time [s, wall-equivalent] advanced between two socket polls.
MAX_CHUNK_WALL_S = 0.02
_EPS = 1e-9


class Simulator(object):
    """The whole simulated vehicle on a MAVLink TCP port.

    Parameters
    ----------
    vehicle : Vehicle, optional
        Defaults to :func:`brov2_hybrid.vehicle.vehicle_file.load_vehicle`.
    sim_options : SimOptions, optional
    firmware_config : FirmwareConfig, optional
    link_config : LinkConfig, optional
        Default to the sections of ``params/simulator.yaml`` (or ``params_file``).
    speedup : float
        Simulated seconds per wall second (1 = real time).
    initial_eta : array_like (6,), optional
        Start pose (north, east, down [m], roll, pitch, yaw [rad]); default from the
        ``initial_state`` section.
    params_file : str, optional
        Simulator YAML to read the defaults from.
    clock : callable
        Monotonic wall clock [s] (tests may inject one).
    signing_key : bytes (32,), optional
        Start keyed for MAVLink 2 signing, as a vehicle that was keyed before
        (:mod:`brov2_hybrid.link.mavlink_signing`); default: unkeyed until SETUP_SIGNING.
    lockstep : LockstepGate, optional
        Hold simulated time at each control step until its command arrived
        (:mod:`brov2_hybrid.sim.lockstep`); default: simulated time follows the wall clock.
    """

    def __init__(self, vehicle=None, sim_options=None, firmware_config=None, link_config=None,
                 speedup=1.0, initial_eta=None, params_file=None, clock=time.monotonic, signing_key=None,
                 lockstep=None):
        if not (isinstance(speedup, (int, float)) and math.isfinite(speedup) and speedup > 0):
            raise Brov2Error("speedup: expected a number > 0, got %r" % (speedup,))
        self.vehicle = vehicle if vehicle is not None else load_vehicle()
        self.sim_options = sim_options if sim_options is not None else load_sim_options(params_file)
        self.firmware_config = firmware_config or sim_config.load_firmware_config(params_file)
        self.link_config = link_config or sim_config.load_link_config(params_file)
        self.speedup = float(speedup)
        self.clock = clock
        if initial_eta is None:
            start = sim_config.load_initial_state(params_file)
            initial_eta = start.eta()
        self.plant = Plant(self.vehicle, self.sim_options)
        self.plant.reset(eta=initial_eta)
        self.firmware = Firmware(self.vehicle, self.firmware_config)
        ratio = (1.0 / self.plant.dt_s) / self.firmware_config.loop_rate_hz
        self.steps_per_tick = max(1, int(round(ratio)))
        if abs(ratio - self.steps_per_tick) > 1e-6:
            raise Brov2Error("firmware.loop_rate_hz %g must divide the physics rate %g Hz"
                             % (self.firmware_config.loop_rate_hz, 1.0 / self.plant.dt_s))
        self.tick_s = self.steps_per_tick * self.plant.dt_s
        host, port = sim_config.parse_tcp_address(self.link_config.address)
        udp_out = None
        if self.link_config.udp_out:
            udp_out = sim_config.parse_host_port(self.link_config.udp_out, "udp_out")
        self.server = MavlinkServer(host, port, udp_out)
        encoder = mavlink.MAVLink(None, srcSystem=self.link_config.system_id,
                                  srcComponent=self.link_config.component_id)
        builder = TelemetryBuilder(encoder, self.link_config, self.vehicle.body, time.time())
        self.protocol = MavlinkProtocol(self.server, self.plant, self.firmware, builder, self.link_config,
                                      self.firmware_config.telemetry_delay_s)
        if signing_key is not None:
            self.protocol.set_signing_key(signing_key, mavlink_signing.timestamp_now())
        self.lockstep = self.protocol.lockstep = lockstep
        #: A :class:`~brov2_hybrid.sim.tether_state.TetherReporter` given the tether every firmware tick (or None).
        self.tether_report = None
        self._add_sim_params()
        self._applied_pwm = None
        self._pending_tick_s = math.inf
        self._stop = False
        self._behind_warned = False
        self._linked = False     # a link has connected since the start
        self._held_heartbeat_wall = -math.inf
        self._anchor()
        self._run_firmware(self.plant.t_s)

    # ------------------------------------------------------------------ parameters
    def _add_sim_params(self):
        params = self.firmware.params
        params.add(ParamDef("SIM_MODEL", float(MODELS.index(self.plant.kind)), PARAM_INT8, 0, 1, integer=True),
                   on_change=self._on_model)
        add_delay_param(params, "SIM_TLM_DELAY", self.protocol, "telemetry_delay_s")
        params.add(ParamDef("SIM_SPEEDUP", self.speedup, PARAM_REAL32, self.speedup, self.speedup,
                            read_only=True))
        params.add(ParamDef("SYSID_THISMAV", float(self.link_config.system_id), PARAM_INT16, 1, 255,
                            integer=True, read_only=True))

    def _on_model(self, value):
        kind = MODELS[int(value)]
        if kind == self.plant.kind:
            return None
        old = self.plant
        options = dataclasses.replace(self.sim_options, model=kind)
        plant = Plant(self.vehicle, options)
        plant.reset(eta=old.eta, nu=old.nu, t_s=old.t_s)
        plant.set_motor_pwm(old.motor_pwm_us)
        self.plant = self.protocol.plant = plant
        self.sim_options = options
        LOG.info("vehicle model: %s", kind)
        return None

    # ------------------------------------------------------------------ clock
    @property
    def port(self):
        """TCP port the simulator listens on."""
        return self.server.port

    @property
    def t_s(self):
        """Simulated time [s]."""
        return self.plant.t_s

    def _anchor(self):
        self._wall_anchor = self.clock()
        self._sim_anchor = self.plant.t_s

    def _sim_time_now(self):
        return self._sim_anchor + (self.clock() - self._wall_anchor) * self.speedup

    def _next_event_s(self):
        t = self.plant.t_s
        report = self.tether_report.next_s if self.tether_report is not None else math.inf
        return min(self.firmware.next_event_s(t), self.protocol.next_due_s(), self._pending_tick_s, report)

    def _run_firmware(self, t_s):
        pwm = self.firmware.update(t_s)
        if pwm != self._applied_pwm:
            self.plant.set_motor_pwm(pwm)
            self._applied_pwm = list(pwm)

    def _tick(self):
        t = self.plant.t_s
        self._pending_tick_s = math.inf
        self._run_firmware(t)
        self.protocol.tick(t)
        if self.tether_report is not None:
            self.tether_report.update(t, self.plant)

    def advance_to(self, t_target_s):
        """Run physics and firmware up to simulated time ``t_target_s`` (whole ticks)."""
        tick = self.tick_s
        while True:
            t = self.plant.t_s
            goal = min(self._next_event_s(), t_target_s)
            n = max(1, int(math.ceil((goal - t) / tick - _EPS)))
            if t + n * tick > t_target_s + _EPS:
                n = int(math.floor((t_target_s - t) / tick + _EPS))
                if n > 0:
                    self.plant.step(n * self.steps_per_tick)
                return
            self.plant.step(n * self.steps_per_tick)
            self._tick()
            if self.lockstep is not None and self.lockstep.holding:
                return      # an attitude went out: wait for its command

    # ------------------------------------------------------------------ loop
    def stop(self):
        """Ask :meth:`run` to return (safe from another thread or a signal handler)."""
        self._stop = True

    def run(self, duration_s=None):
        """Serve until :meth:`stop` (or for ``duration_s`` simulated seconds)."""
        end = math.inf if duration_s is None else self.plant.t_s + float(duration_s)
        self._anchor()
        LOG.info("brov2_sitl: listening on tcp:%s:%d (model %s, mixer %s, speedup %g%s)",
                 self.server.host, self.port, self.plant.kind, self.firmware.mixer_kind, self.speedup,
                 ", lockstep" if self.lockstep is not None else "")
        extra = [self.lockstep] if self.lockstep is not None else []
        while not self._stop and self.plant.t_s < end - _EPS:
            self._lockstep_update()
            self._catch_up(end)
            if self.lockstep is not None and self.lockstep.holding:
                self._heartbeat_while_held()
                wait = min(self.lockstep.wait_s(), HELD_HEARTBEAT_S)
            else:
                wake = min(self._next_event_s(), end, self.plant.t_s + MAX_CHUNK_WALL_S * self.speedup)
                wait = (wake - self._sim_anchor) / self.speedup + self._wall_anchor - self.clock()
            new, closed, messages = self.server.poll(min(MAX_WAIT_S, max(0.0, wait)), extra)
            if new or messages:
                self._catch_up(end)
            for connection in new:
                self.protocol.on_connect(connection, self.plant.t_s)
                self._linked = True
            for connection in closed:
                self.protocol.on_close(connection)
            self._handle(messages)

    def _heartbeat_while_held(self):
        """A HEARTBEAT every HELD_HEARTBEAT_S of wall time while a step waits: the vehicle is alive
        while its clock waits for the autopilot (a stream on simulated time would pause, and a
        ground station would declare the link lost). It carries no time: the physics does not see it."""
        now = self.clock()
        if now - self._held_heartbeat_wall >= HELD_HEARTBEAT_S:
            self._held_heartbeat_wall = now
            self.protocol.emit(None, self.protocol.builder.build("HEARTBEAT", telemetry.Sample(self.plant),
                                                                 self.firmware), self.plant.t_s)

    def _lockstep_update(self):
        """Let the gate take the commands that arrived; simulated time resumes at the speed-up
        from the moment a held step is released."""
        if self.lockstep is None:
            return
        was_holding = self.lockstep.holding
        note = self.lockstep.update()
        if note is not None:
            (LOG.warning if note.warning else LOG.info)("%s", note.text)
        if was_holding and not self.lockstep.holding:
            self._anchor()

    def _catch_up(self, end):
        if self.lockstep is not None and (self.lockstep.holding or (self.lockstep.engaged and not self._linked)):
            self._anchor()      # waiting for the controller (or, engaged from the start, for its link)
            return
        target = min(self._sim_time_now(), end)
        behind_wall = (target - self.plant.t_s) / self.speedup
        if behind_wall > MAX_BEHIND_WALL_S:
            if not self._behind_warned:
                LOG.warning("simulation cannot keep up with speedup %g; running slower", self.speedup)
                self._behind_warned = True
            self._anchor()
            target = self.plant.t_s + MAX_CHUNK_WALL_S * self.speedup
        self.advance_to(min(target, self.plant.t_s + MAX_CHUNK_WALL_S * self.speedup * 5))

    def _handle(self, messages):
        t = self.plant.t_s
        for connection, message in messages:
            self.protocol.handle(connection, message, t)
        if self.protocol.input_changed:
            # The firmware reads the new input on its next loop.
            self.protocol.input_changed = False
            self._pending_tick_s = min(self._pending_tick_s, t + self.tick_s)

    def counters(self):
        """Traffic and firmware counters (received, malformed, unhandled, rejected overrides...)."""
        counters = {"server": dict(self.server.counters), "protocol": dict(self.protocol.counters),
                    "firmware": dict(self.firmware.counters)}
        if self.lockstep is not None:
            counters["lockstep"] = dict(self.lockstep.counters)
        return counters

    def close(self):
        """Close the sockets; logs the time reached and the traffic counters."""
        LOG.info("stopped at t = %.3f s; counters %s", self.t_s, self.counters())
        if self.plant.tether is not None:
            LOG.info(self.plant.tether.summary_line())
        if self.lockstep is not None:
            c = self.lockstep.counters
            (LOG.warning if c["timeouts"] else LOG.info)(
                "lockstep: %d control steps, %d answered, %d went on without their command after %.1f s",
                c["steps"], c["answered"], c["timeouts"], self.lockstep.config.timeout_s)
            self.lockstep.close()
        self.server.close()


# ---------------------------------------------------------------------- command line

def build_arg_parser():
    """The ``brov2_sitl`` command line (simulator options; see ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="brov2_sitl",
        description="BlueROV2 simulator that behaves like the paper's modified ArduSub SITL over "
                    "MAVLink (any vehicle file; updated or stock vehicle model; Algorithm 2 or 1 mixer).")
    add_physics_arguments(parser)
    parser.add_argument("--mixer", choices=MIXER_KINDS,
                        help="firmware mixer: Algorithm 2 'quantitative' or Algorithm 1 'stock' "
                             "(default: firmware.mixer)")
    parser.add_argument("--address", help="MAVLink TCP server, tcp:HOST:PORT (default tcp:127.0.0.1:5760; "
                                          "port 0 picks a free one)")
    parser.add_argument("--udp-out", metavar="HOST:PORT", help="also send MAVLink to this UDP address "
                                                               "(e.g. 127.0.0.1:14550)")
    parser.add_argument("--speedup", type=float, default=1.0, help="simulated seconds per wall second (default 1)")
    parser.add_argument("--command-delay-s", type=float, help="pilot-input transport delay [s]")
    parser.add_argument("--telemetry-delay-s", type=float, help="telemetry transport delay [s]")
    parser.add_argument("--lockstep", action="store_true",
                        help="hold simulated time at each control step until the controller's command has "
                             "arrived (needs ROS: rosrun brov2_hybrid brov2_sitl; docs/simulator.md 'Lockstep')")
    parser.add_argument("--signing-key-file", metavar="FILE",
                        help="start keyed for MAVLink 2 signing with this key (64 hex digits, "
                             "'passphrase: TEXT' or 32 raw bytes; docs/real-vehicle.md 'Signing')")
    return parser


def simulator_from_args(args, controller=None):
    """Build a :class:`Simulator` from parsed command-line ``args``.

    ``controller``: with ``--lockstep``, where the controller's commands come from, an object
    with the :class:`~brov2_hybrid.sim.lockstep.ControllerLink` fields and ``connect(gate)``
    (the ROS shell's); raises Brov2Error when ``--lockstep`` has none."""
    if args.lockstep and controller is None:
        raise Brov2Error("--lockstep: the controller's commands arrive over ROS; run the simulator as "
                         "the ROS node (rosrun brov2_hybrid brov2_sitl --lockstep, or the launch files)")
    vehicle, options, eta = physics_from_args(args)
    firmware = sim_config.load_firmware_config(args.params)
    if args.mixer:
        firmware.mixer = args.mixer
    for name in ("command_delay_s", "telemetry_delay_s"):
        value = getattr(args, name)
        if value is not None:
            if not (math.isfinite(value) and value >= 0):
                raise Brov2Error("--%s: expected a value >= 0, got %r" % (name.replace("_", "-"), value))
            setattr(firmware, name, value)
    link = sim_config.load_link_config(args.params)
    if args.address:
        link.address = args.address
    if args.udp_out:
        link.udp_out = args.udp_out
    key = mavlink_signing.load_key(args.signing_key_file) if args.signing_key_file else None
    LOG.info("%s", vehicle.describe())
    gate = None
    if args.lockstep:
        gate = LockstepGate(vehicle.rc_map.channels, controller.control_period_s,
                            load_lockstep_config(args.params), controller.attitude_message)
        controller.connect(gate)
        LOG.info("lockstep: waiting at each %s for the command on %s (control period %.3f s, time-out %.1f s)",
                 gate.attitude_message, controller.command_topic, controller.control_period_s,
                 gate.config.timeout_s)
    sim = Simulator(vehicle=vehicle, sim_options=options, firmware_config=firmware, link_config=link,
                    speedup=args.speedup, initial_eta=eta, params_file=args.params, signing_key=key, lockstep=gate)
    sim.tether_report = reporter_for(controller, options, args.params)
    return sim


def main(argv=None, controller=None):
    """Command-line entry point; returns the process exit status. ``controller``: see
    :func:`simulator_from_args` (the ROS shell passes one for ``--lockstep``)."""
    return serve(build_arg_parser().parse_args(argv), lambda args: simulator_from_args(args, controller), LOG)


if __name__ == "__main__":
    sys.exit(main())
