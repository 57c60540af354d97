#!/usr/bin/env python3
"""Crash matrix: SIGKILL each node of the autopilot mid-dive and measure what the vehicle does.

Each case is a fresh `roslaunch hybrid_autopilot.launch` (own ROS master port, vehicle
port and log folder) flying a level dive at constant surge in real time against the simulator, which
this script runs itself so that it outlives the launch. A pymavlink client connected
straight to the simulator (it accepts several TCP clients) watches the vehicle's own
motor outputs (SERVO_OUTPUT_RAW) and armed flag (HEARTBEAT), so the observer does not
depend on any node being killed. Per node it records: time from the kill until all
eight motors are at neutral (1500 us), whether control came back (respawn), whether
the vehicle is still armed at the end, whether the launch ended, what /rosout told
the operator, and whether every tick log file reads back (brov2_hybrid.tick_log.logfile.read_log).
Before control_law is killed, omega_d is retuned with dynparam: the respawned node must
fly with the retuned value (dynamic_reconfigure keeps it on the parameter server).

Prints a Markdown table (docs/safety.md "Crashes and failures") and exits 1 when a goal is
missed: motors neutral <= --goal-s after an autopilot node dies (the bridge: within the
vehicle's RC_OVERRIDE_TIME + --goal-s, nothing else can release an override a killed
bridge keeps alive), every log parses, and a killed logger loses no tick (its respawn
fills the gap from control_law's history: largest gap between logged ticks across the
files <= --max-log-gap-s, or <= the largest gap inside one file when control_law's own ticks
were further apart on a busy machine).

    scripts/crash_matrix.py                      (all nodes)
    scripts/crash_matrix.py --nodes control_law logger
"""
import argparse
import glob
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from xmlrpc.client import ServerProxy

os.environ.setdefault("MAVLINK20", "1")   # before pymavlink is imported: the simulator speaks MAVLink 2
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, "src"))

from brov2_hybrid.link.ardusub import PWM_NEUTRAL_US, SERVO_OUTPUTS  # noqa: E402
from brov2_hybrid.errors import Brov2Error  # noqa: E402
from brov2_hybrid.tick_log.logfile import read_log  # noqa: E402

NODES = ("control_law", "thruster_allocation", "mavlink_bridge", "csv_reader", "logger", "mission")
NEUTRAL_US = int(PWM_NEUTRAL_US)   # every motor output when disarmed or at neutral [us]
RETUNED_OMEGA_D = 4.0   # rad/s, set with dynparam before control_law is killed; the respawn must keep it
RESPAWN_WAIT_S = 30.0   # s: how long a killed node may take to come back and register (a busy machine starts it slowly)
SURGE_CMD = 0.3     # constant surge in the test dive: the motors are never at neutral while controlled


def write_dive(path, duration_s=300.0, step_s=0.1):
    """A level dive at constant surge, so that 'all motors at 1500' can only mean 'not controlled'."""
    with open(path, "w") as handle:
        handle.write("time_s,roll_deg,pitch_deg,yaw_deg,surge,sway,heave\n")
        for k in range(int(duration_s / step_s) + 1):
            handle.write("%.2f,0,0,0,%g,0,0\n" % (k * step_s, SURGE_CMD))


def free_ports(count):
    """``count`` different TCP ports free on 127.0.0.1 now (bound together, then released; another process
    may take one). Bound one after the other, the kernel may hand the same port out twice: the crash
    matrix's simulator and ROS master were once given one port, and the simulator could not listen."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def stop(proc, timeout_s=15.0):
    """SIGINT ``proc``'s process group and wait ``timeout_s``; SIGKILL it if still running (None or
    an ended process: nothing to do)."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5.0)


class FcuWatch(object):
    """SERVO_OUTPUT_RAW and the armed flag of the FCU, stamped with wall time."""

    def __init__(self, port):
        from pymavlink import mavutil
        self.samples = []          # (t_monotonic, [8 pwm])
        self.armed = None
        self._stop = False
        deadline = time.monotonic() + 20.0
        while True:
            try:
                self.link = mavutil.mavlink_connection("tcp:127.0.0.1:%d" % port, source_system=201,
                                                       autoreconnect=False)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop:
            try:
                msg = self.link.recv_match(type=["SERVO_OUTPUT_RAW", "HEARTBEAT"], blocking=True, timeout=0.1)
            except (OSError, ValueError):
                return
            if msg is None:
                continue
            if msg.get_type() == "HEARTBEAT" and msg.get_srcSystem() == 1:
                self.armed = bool(msg.base_mode & 128)
            elif msg.get_type() == "SERVO_OUTPUT_RAW":
                self.samples.append((time.monotonic(), [getattr(msg, "servo%d_raw" % i) for i in range(1, SERVO_OUTPUTS + 1)]))

    def moving(self):
        """True when the last SERVO_OUTPUT_RAW has a motor away from neutral (1500 us)."""
        return bool(self.samples) and any(c != NEUTRAL_US for c in self.samples[-1][1])

    def close(self):
        """Stop the reader thread (waits up to 2 s) and close the link."""
        self._stop = True
        self._thread.join(2.0)
        self.link.close()


def node_pid(master_uri, name):
    """The pid of ROS node ``name`` (via the master and the node's own XML-RPC API), or None."""
    try:
        code, _, uri = ServerProxy(master_uri).lookupNode("/crash_matrix", "/" + name)
        if code != 1:
            return None
        code, _, pid = ServerProxy(uri).getPid("/crash_matrix")
        return pid if code == 1 else None
    except OSError:
        return None


def wait(predicate, timeout_s):
    """Poll ``predicate`` every 50 ms for up to ``timeout_s``; True as soon as it holds, else False."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def dive_running(log_dir):
    """True once a tick log in ``log_dir`` holds a row flown in mode ACTIVE (the dive is on)."""
    for path in glob.glob(os.path.join(log_dir, "*.csv")):
        try:
            with open(path, errors="replace") as handle:
                if ",ACTIVE" in handle.read():
                    return True
        except OSError:
            pass
    return False


def rosout_after(ros_log_dir, t_wall):
    """WARN/ERROR/FATAL lines of rosout.log stamped after ``t_wall``: (level, node, text)."""
    out = []
    for path in glob.glob(os.path.join(ros_log_dir, "**", "rosout.log"), recursive=True):
        with open(path, errors="replace") as handle:
            for line in handle:
                parts = line.split(" ", 3)
                try:
                    stamp = float(parts[0])
                except (ValueError, IndexError):
                    continue
                if stamp >= t_wall and len(parts) == 4 and parts[1] in ("WARN", "ERROR", "FATAL"):
                    text = parts[3].split("] ", 2)[-1].strip()
                    out.append((parts[1], parts[2].lstrip("/"), text))
    return out


def listening(port):
    """True when something accepts a TCP connection on 127.0.0.1:``port`` (the simulator serves many clients,
    so a probe that closes at once is harmless)."""
    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
        return True
    except OSError:
        return False


def start_simulator(python, case_dir, ros_log, attempts=3):
    """The simulator of a case, listening: (process, its port, the ROS master's port). A port picked free
    may be taken before the simulator listens on it (any outgoing connection draws from the same range;
    once the simulator could not listen, and the launch flew against nothing): then new ports, up to
    ``attempts`` times. The launch starts only once the simulator listens."""
    said = ""
    for _ in range(attempts):
        port, master_port = free_ports(2)
        sim = subprocess.Popen([python, "-m", "brov2_hybrid.sim", "--address", "tcp:127.0.0.1:%d" % port],
                               stdout=open(os.path.join(case_dir, "sim.log"), "ab"), stderr=subprocess.STDOUT,
                               start_new_session=True, env=dict(os.environ, ROS_LOG_DIR=ros_log))
        if wait(lambda: sim.poll() is not None or listening(port), 30.0) and sim.poll() is None:
            return sim, port, master_port
        stop(sim)
        with open(os.path.join(case_dir, "sim.log"), errors="replace") as handle:
            said = handle.read()[-600:].strip()
    raise RuntimeError("the simulator did not listen after %d tries (see %s): %s" % (attempts, case_dir, said))


def run_case(node, out_dir, observe_s, python):
    """One case: simulator + launch in a folder of their own under ``out_dir``, SIGKILL ``node`` mid-dive,
    watch the vehicle for ``observe_s``, then read the tick logs back.

    Returns the case's figures (neutral_s, moving_at_end, armed, respawned, launch_ended, told,
    log_files, log_rows, log_gap_s, ...); RuntimeError when the vehicle never armed and moved, the
    node is missing, or the motors were neutral before the kill."""
    case_dir = os.path.join(out_dir, node)
    log_dir = os.path.join(case_dir, "logs")
    ros_log = os.path.join(case_dir, "ros")
    os.makedirs(log_dir)
    dive = os.path.join(case_dir, "surge_dive.csv")
    write_dive(dive)
    sim = launch = watch = None
    result = {"node": node}
    try:
        sim, port, master_port = start_simulator(python, case_dir, ros_log)
        master_uri = "http://127.0.0.1:%d" % master_port
        env = dict(os.environ, ROS_MASTER_URI=master_uri, ROS_LOG_DIR=ros_log)
        launch_out = open(os.path.join(case_dir, "roslaunch.log"), "wb")
        launch = subprocess.Popen(
            ["roslaunch", "-p", str(master_port), "brov2_hybrid", "hybrid_autopilot.launch", "sim:=false",
             "fcu_url:=tcp:127.0.0.1:%d" % port, "dive:=%s" % dive, "exit_at_end:=false",
             "log_dir:=%s" % log_dir, "output:=log"],
            stdout=launch_out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        watch = FcuWatch(port)
        # the dive, not the firmware probe before it (which moves the motors too, then the vehicle
        # holds level at neutral until the dive starts): the tick log has an ACTIVE row
        if not wait(lambda: watch.armed and dive_running(log_dir), 90.0):
            raise RuntimeError("%s: the vehicle never armed and flew the dive (see %s)" % (node, case_dir))
        time.sleep(2.0)                                    # mid-dive
        pid = node_pid(master_uri, node)
        if pid is None:
            raise RuntimeError("%s: no such node in the launch" % node)
        if not watch.moving():
            raise RuntimeError("%s: motors at neutral before the kill (see %s)" % (node, case_dir))
        if node == "control_law":   # state to recover: omega_d retuned live before the kill
            subprocess.run(["rosrun", "dynamic_reconfigure", "dynparam", "set", "/control_law", "omega_d_rad_s",
                            str(RETUNED_OMEGA_D)], env=env, check=True, stdout=subprocess.DEVNULL, timeout=30)
        t_wall, t0 = time.time(), time.monotonic()
        os.kill(pid, signal.SIGKILL)
        time.sleep(observe_s)
        after = [(t - t0, pwm) for t, pwm in list(watch.samples) if t >= t0]
        neutral = [t for t, pwm in after if all(c == NEUTRAL_US for c in pwm)]
        result["neutral_s"] = neutral[0] if neutral else None
        result["moving_at_end"] = bool(after) and any(c != NEUTRAL_US for c in after[-1][1])
        result["armed"] = watch.armed
        result["launch_ended"] = launch.poll() is not None
        # a respawned node registers with the master only once it has started: on a busy machine that
        # can be after the observation window (the console has said "respawning" already)
        new_pid = [None]

        def came_back():
            new_pid[0] = node_pid(master_uri, node)
            return new_pid[0] is not None and new_pid[0] != pid
        result["respawned"] = not result["launch_ended"] and wait(came_back, RESPAWN_WAIT_S)
        result["told"] = rosout_after(ros_log, t_wall)
        with open(os.path.join(case_dir, "roslaunch.log"), errors="replace") as handle:
            result["roslaunch"] = [ln.strip() for ln in handle if "has died" in ln or "respawning" in ln
                                   or "REQUIRED" in ln]
    finally:
        if watch is not None:
            watch.close()
        stop(launch)
        stop(sim)
    files = sorted(glob.glob(os.path.join(log_dir, "*.csv")))
    times, problems, omega_d, within = [], [], None, 0.0
    for path in files:
        try:
            log = read_log(path)
            times.extend(log["time_s"])
            within = max([within] + [b - a for a, b in zip(log["time_s"][:-1], log["time_s"][1:])])
            omega_d = float(log["omega_d_rad_s"][-1]) if len(log["time_s"]) else omega_d
        except Brov2Error as exc:
            problems.append(str(exc))
    times.sort()          # across files: a respawned logger's gap counts too
    rows = len(times)
    gap = max((b - a for a, b in zip(times[:-1], times[1:])), default=0.0)
    result.update(log_files=len(files), log_rows=rows, log_gap_s=float(gap), log_within_gap_s=float(within),
                  log_problems=problems, log_repeated=rows - len(set(times)), omega_d_at_end=omega_d)
    return result


def allowed_log_gap_s(result, max_log_gap_s):
    """The largest gap [s] a killed logger's files may show between logged ticks: ``max_log_gap_s``, or the
    largest gap inside one file when that is longer. Inside a file nothing was lost to the kill: a gap there is
    control_law's own (a busy machine's attitude stream stalls it), and a respawn that lost no tick joins the
    files with no gap longer than those."""
    return max(max_log_gap_s, result.get("log_within_gap_s", 0.0))


def goal(result, goal_s, override_time_s, max_log_gap_s):
    """(met, the goal in words)."""
    if result["log_problems"] or result["log_files"] == 0:
        return False, "every log parses"
    if result["node"] == "control_law" and result["omega_d_at_end"] != RETUNED_OMEGA_D:
        return False, "retuned omega_d %g kept (got %s)" % (RETUNED_OMEGA_D, result["omega_d_at_end"])
    if result["node"] == "logger":
        # the respawned logger first writes the ticks it missed (control_law's history)
        goes_on = not (result["neutral_s"] is not None and result["neutral_s"] < 1.0 and not result["moving_at_end"])
        allowed = allowed_log_gap_s(result, max_log_gap_s)
        return goes_on and result["log_gap_s"] <= allowed and result["log_repeated"] == 0, \
            "the dive goes on, no tick missing (log gap <= %.2f s, the largest inside a file or %.2f s) or written " \
            "twice" % (allowed, max_log_gap_s)
    limit = goal_s + (override_time_s if result["node"] == "mavlink_bridge" else 0.0)
    if result["neutral_s"] is None:
        # respawned before the downstream timeouts (<= 1 s) let the held command lapse
        return result["respawned"] and result["moving_at_end"], "neutral <= %.1f s or control back first" % limit
    return result["neutral_s"] <= limit, "neutral <= %.1f s" % limit


def table(results, goal_s, override_time_s, max_log_gap_s):
    """The Markdown table of ``results`` and the number of goals missed (:func:`goal` per case)."""
    lines = ["| node killed (SIGKILL) | motors neutral after | control back | armed after | launch | "
             "operator told | log files / rows / largest gap | goal |",
             "|---|---|---|---|---|---|---|---|"]
    missed = 0
    for r in results:
        met, what = goal(r, goal_s, override_time_s, max_log_gap_s)
        missed += not met
        first = {}
        for lv, n, t in r["told"]:
            first.setdefault(n, "%s %s: %s" % (lv, n, t[:80]))
        told = "; ".join(list(first.values())[:2]) or "no /rosout warning"
        launch_said = " ".join(r["roslaunch"])
        if "REQUIRED" in launch_said:
            told = "console: REQUIRED process died, shutdown; " + told
        elif "has died" in launch_said:
            told = "console: process has died (exit -9), respawning; " + told
        lines.append("| %s | %s | %s | %s | %s | %s | %d / %d / %.2f s%s | %s %s |" % (
            r["node"] + (" (omega_d retuned to %g first; %g after)" % (RETUNED_OMEGA_D, r["omega_d_at_end"])
                         if r["node"] == "control_law" else ""), "%.2f s" % r["neutral_s"] if r["neutral_s"] is not None else "never",
            "yes" if r["moving_at_end"] else "no", {True: "yes", False: "no", None: "?"}[r["armed"]],
            "ended" if r["launch_ended"] else ("respawned it" if r["respawned"] else "runs on without it"),
            told.replace("|", "/"), r["log_files"], r["log_rows"], r["log_gap_s"],
            (" PARSE ERROR" if r["log_problems"] else "")
            + (", %d ticks twice" % r["log_repeated"] if r["log_repeated"] else ""), "met" if met else "MISSED", what))
    return "\n".join(lines), missed


def main(argv=None):
    """Run the cases of --nodes, print the table; returns 1 when a goal was missed, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", nargs="+", choices=NODES, default=list(NODES))
    parser.add_argument("--observe-s", type=float, default=6.0, help="watch the vehicle this long after the kill")
    parser.add_argument("--goal-s", type=float, default=1.0, help="motors neutral within this after a kill")
    parser.add_argument("--rc-override-time-s", type=float, default=3.0,
                        help="the simulator's RC_OVERRIDE_TIME (params/simulator.yaml)")
    parser.add_argument("--max-log-gap-s", type=float, default=0.1,
                        help="logger case: largest gap between logged ticks across its files (5 ticks at 50 Hz)")
    parser.add_argument("--out", default=None, help="folder for the runs' logs (default: a new temp folder)")
    args = parser.parse_args(argv)
    import tempfile
    out = args.out or tempfile.mkdtemp(prefix="brov2_crash_matrix_")
    os.makedirs(out, exist_ok=True)
    results = []
    for node in args.nodes:
        t = time.monotonic()
        results.append(run_case(node, out, args.observe_s, sys.executable))
        print("%s: done in %.0f s" % (node, time.monotonic() - t), file=sys.stderr, flush=True)
    text, missed = table(results, args.goal_s, args.rc_override_time_s, args.max_log_gap_s)
    print(text)
    print("\n%d of %d goals missed; runs in %s" % (missed, len(results), out))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
