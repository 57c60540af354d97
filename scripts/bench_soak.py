#!/usr/bin/env python3
"""Soak benchmark: the simulator and the whole autopilot looping the bundled dive.

Runs ``hybrid_autopilot.launch`` (simulator, bridge, csv_reader in a loop, control law,
allocation, mission, logger) in real time for ``--minutes`` (default 10, or the
environment variable BROV2_SOAK_MIN) on a master and a vehicle port of its own, and
every ``--sample-s`` reads each node's resident memory and CPU time from /proc. At the
end it prints, per node, the memory growth per hour (least-squares slope after the
warm-up), the control law's CPU time per tick at the start and the end of the run (the
tick-cost drift), and the ticks that were dropped (counter values never received, and
whole periods with no tick). Goals: memory growth under 10 MiB/h for every node,
tick-cost drift (last quarter vs first) under 10 %, no dropped tick; a figure, not a test (exit 0 whatever
it finds, 1 only when the run itself failed).

The figures come from brov2_hybrid.node_logic.soak_stats. `make bench` runs it after the other
benchmarks; `make soak ARGS="--minutes 2"` runs it alone.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

NODES = ("brov2_sitl", "mavlink_bridge", "frames", "csv_reader", "control_law", "thruster_allocation",
         "mission", "logger")
CLK_TCK = os.sysconf("SC_CLK_TCK")
MEMORY_GOAL_MIB_PER_H = 10.0
DRIFT_GOAL_PERCENT = 10.0



def node_pids(launch_pid):
    """{node name: pid} of the nodes started by our roslaunch, from their ``__name:=`` argument.

    Only descendants of the launch count (roslaunch puts each node in a session of its
    own, so the session id does not tell): other runs of the same nodes on this machine
    (a test suite, another launch) are left out.
    """
    parent, cmdlines = {}, {}
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            pid = int(os.path.basename(proc))
            with open(os.path.join(proc, "stat")) as f:
                parent[pid] = int(f.read().rsplit(")", 1)[1].split()[1])   # field 4: ppid
            with open(os.path.join(proc, "cmdline"), "rb") as f:
                cmdlines[pid] = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
    found = {}
    for pid, args in cmdlines.items():
        ancestor, hops = parent.get(pid), 0
        while ancestor not in (None, 0, 1, launch_pid) and hops < 8:
            ancestor, hops = parent.get(ancestor), hops + 1
        if ancestor != launch_pid:
            continue
        for a in args:
            if a.startswith(b"__name:="):
                name = a[len(b"__name:="):].decode("ascii", "replace")
                if name in NODES:
                    found[name] = pid
    return found


def read_proc(pid):
    """(resident bytes, cumulative CPU seconds) of a process, or None if it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / float(CLK_TCK)   # utime, stime (fields 14, 15)
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return rss_kib * 1024.0, cpu


class TickRecorder(object):
    """Control ticks as they arrive on /brov2/status: counter, stamp, wall time, mode."""

    def __init__(self):
        import rospy
        from brov2_hybrid.msg import AutopilotStatus
        self._lock = threading.Lock()
        self.rows = []
        rospy.Subscriber("/brov2/status", AutopilotStatus, self._on_status, queue_size=5000)

    def _on_status(self, st):
        with self._lock:
            self.rows.append((st.tick, st.header.stamp.to_sec(), time.monotonic(), st.mode))

    def arrays(self):
        """The ticks so far as (counter (int64), stamp [s], arrival [monotonic s], modes list)."""
        with self._lock:
            rows = list(self.rows)
        return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows]),
                np.array([r[2] for r in rows]), [r[3] for r in rows])


def main(argv=None):
    """Run the soak (see the module docstring) and print its figures; returns 0 whatever they are
    (also with --minutes 0: skipped), 1 when the run itself failed (roslaunch ended, nodes missing
    after 60 s, any other error; the message names the log folder where there is one)."""
    from brov2_hybrid.link.fcu_address import free_tcp_port
    from brov2_hybrid.node_logic import soak_stats
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("BROV2_SOAK_MIN", "10")),
                        help="soak duration [min] (default 10, or $BROV2_SOAK_MIN)")
    parser.add_argument("--sample-s", type=float, default=5.0, help="seconds between memory/CPU samples")
    parser.add_argument("--warmup-s", type=float, default=60.0, help="start-up seconds left out of the slopes")
    args = parser.parse_args(argv)
    if args.minutes <= 0:
        print("bench_soak: --minutes 0: soak skipped")
        return 0
    duration_s = 60.0 * args.minutes
    warmup_s = min(args.warmup_s, 0.25 * duration_s)

    port, vehicle_port = free_tcp_port(), free_tcp_port()
    os.environ["ROS_MASTER_URI"] = "http://127.0.0.1:%d" % port
    log_dir = tempfile.mkdtemp(prefix="brov2_soak_")
    launch_log = open(os.path.join(log_dir, "roslaunch.log"), "w")
    cmd = ["roslaunch", "-p", str(port), "brov2_hybrid", "hybrid_autopilot.launch", "loop:=true",
           "exit_at_end:=false", "speedup:=1", "output:=log", "log_dir:=%s" % log_dir,
           "fcu_url:=tcp:127.0.0.1:%d" % vehicle_port]
    print("soak: %.1f min of the bundled dive in a loop, real time: %s" % (args.minutes, " ".join(cmd)))
    sys.stdout.flush()
    launch = subprocess.Popen(cmd, stdout=launch_log, stderr=subprocess.STDOUT, start_new_session=True)
    samples = {name: [] for name in NODES}
    try:
        import rospy
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            if launch.poll() is not None:
                raise RuntimeError("roslaunch ended at start-up (exit %s); see %s" % (launch.returncode, log_dir))
            pids = node_pids(launch.pid)
            if len(pids) == len(NODES):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError("nodes missing after 60 s: %s; see %s"
                               % (sorted(set(NODES) - set(node_pids(launch.pid))), log_dir))
        rospy.init_node("bench_soak", anonymous=True, disable_signals=True)
        ticks = TickRecorder()
        t0 = time.monotonic()
        restarts = 0
        while time.monotonic() - t0 < duration_s:
            if launch.poll() is not None:
                raise RuntimeError("roslaunch ended after %.0f s (exit %s); see %s"
                                   % (time.monotonic() - t0, launch.returncode, log_dir))
            now_pids = node_pids(launch.pid)
            restarts += sum(1 for n, p in now_pids.items() if n in pids and p != pids[n])
            pids.update(now_pids)
            for name, pid in pids.items():
                reading = read_proc(pid)
                if reading is not None:
                    samples[name].append((time.monotonic(), reading[0], reading[1]))
            time.sleep(args.sample_s)
        k, stamps, wall, modes = ticks.arrays()
    except Exception as exc:
        print("soak: FAILED: %s" % exc)
        return 1
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGINT)
            try:
                launch.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(launch.pid, signal.SIGKILL)
        launch_log.close()

    print("soak: %.1f min, samples every %.0f s, slopes after a %.0f s warm-up" % (args.minutes, args.sample_s, warmup_s))
    print("%-20s %13s %10s %14s" % ("node", "RSS at warm-up", "RSS end", "growth"))
    worst = 0.0
    for name in NODES:
        s = np.array(samples[name]) if samples[name] else np.empty((0, 3))
        if s.shape[0] < 3:
            print("%-20s %s" % (name, "too few samples"))
            continue
        growth = soak_stats.memory_growth_mib_per_h(s[:, 0], s[:, 1], warmup_s)
        worst = max(worst, growth) if np.isfinite(growth) else worst
        at_warmup = s[np.searchsorted(s[:, 0], s[0, 0] + warmup_s).clip(max=len(s) - 1), 1]
        print("%-20s %10.1f MiB %6.1f MiB %9.2f MiB/h" % (name, at_warmup / soak_stats.MIB,
                                                         s[-1, 1] / soak_stats.MIB, growth))
    drift = float("nan")
    cl = np.array(samples["control_law"]) if samples["control_law"] else np.empty((0, 3))
    if cl.shape[0] >= 3 and wall.size:
        centres, per_tick = soak_stats.cpu_ms_per_tick(cl[:, 0], cl[:, 2], wall, args.sample_s)
        ok = np.isfinite(per_tick) & (centres >= t0 + warmup_s) if centres.size else centres.astype(bool)
        quarter = int(np.sum(ok)) // 4
        if quarter >= 1:
            first, last = np.mean(per_tick[ok][:quarter]), np.mean(per_tick[ok][-quarter:])
            drift = 100.0 * (last - first) / first
            print("control_law CPU per tick: %.3f ms (first quarter after warm-up) -> %.3f ms (last quarter): "
                  "drift %+.1f %%" % (first, last, drift))
    steady = wall >= t0 + warmup_s
    if np.any(steady):
        k, stamps, modes = k[steady], stamps[steady], [m for m, s in zip(modes, steady) if s]
        period = float(np.median(np.diff(np.unique(stamps)))) if np.unique(stamps).size > 1 else float("nan")
        gaps = soak_stats.tick_gaps(k, stamps, period)
        not_active = sum(1 for m in modes if m != "ACTIVE")
        print("ticks after warm-up: %d received at %.1f Hz (vehicle clock); %d tick numbers never received, %d "
              "periods with no tick (%d late intervals); %d ticks not ACTIVE (between loops of the dive the "
              "input pauses)" % (gaps["received"], 1.0 / period, gaps["missing"], gaps["skipped_periods"],
                                 gaps["late_intervals"], not_active))
        dropped = gaps["missing"] + gaps["skipped_periods"]
    else:
        print("ticks: none received after the warm-up")
        dropped = -1
    logs = glob.glob(os.path.join(log_dir, "*.csv"))
    size = sum(os.path.getsize(p) for p in logs)
    print("log: %d file(s), %.1f MiB (%.1f MiB/h); node restarts seen: %d"
          % (len(logs), size / soak_stats.MIB, size / soak_stats.MIB / (duration_s / 3600.0), restarts))
    flat = worst < MEMORY_GOAL_MIB_PER_H and (not np.isfinite(drift) or abs(drift) < DRIFT_GOAL_PERCENT) \
        and dropped == 0
    print("goals: memory growth < %.0f MiB/h per node, tick-cost drift < %.0f %%, no dropped tick: %s"
          % (MEMORY_GOAL_MIB_PER_H, DRIFT_GOAL_PERCENT, "met" if flat else "NOT met"))
    shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
