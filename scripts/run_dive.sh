#!/usr/bin/env bash
# `make run`: fly the bundled AR-pilot dive with the hybrid autopilot in the simulator,
# then leave the tick log, a summary (IAE and energy per axis) and plots in a run
# folder and print where they are.
#
#   make run                                   # bundled dive, omega_d 3, 2x real time
#   make run ARGS="omega_d:=4.0 record_bag:=true"
#   BROV2_SPEEDUP=1 make run                   # real time
#   make run ARGS="sim:=ardusub placement:=onboard omega_d:=8"   # the law in ArduSub's Lua script (docs/onboard.md)
#
# Extra arguments are roslaunch arguments of launch/hybrid_autopilot.launch.
# The run folder is out/runs/dive_<date>-<time>/ (never reused; BROV2_RUNS_DIR changes out/runs).
#
# Exit status: the mission's exit code (roslaunch itself exits 0 whatever its required
# nodes return; the mission leaves its code in <run>/mission_exit_code): 0 the dive was
# flown to its end, 2 bad parameters, 3 no vehicle / not in the mode / not armed, 4 the
# override is ignored, 5 firmware refused or not told, 6 no telemetry from the vehicle, 130
# shut down (Ctrl-C) before the end. 7 when another required node (mavros_node) was killed by
# a signal and roslaunch ended the run. 1 when the mission left no code (another required node ended the run, e.g.
# csv_reader refusing the dive file) or no log was written.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEEDUP="${BROV2_SPEEDUP:-2}"

# use_mavros:=true flies through real MAVROS: build it once (cached; ~15 min of CPU the first time)
# before the workspace is set up on it. MAVROS runs on the wall clock (it reads no /clock), so the
# simulator runs in real time with it.
for arg in "$@"; do
    if [ "$arg" = "use_mavros:=true" ]; then
        bash "$REPO/scripts/build_mavros.sh" >/dev/null \
            || { echo "make run: MAVROS is needed for use_mavros:=true and could not be built" >&2; exit 1; }
        if [ "$SPEEDUP" != 1 ]; then
            echo "make run: use_mavros:=true: speed-up 1x instead of ${SPEEDUP}x (MAVROS runs on the wall clock)"
            SPEEDUP=1
        fi
    fi
done
# placement:=onboard: the law runs in the Lua script inside real ArduSub SITL (docs/onboard.md "Flying it
# from ROS"). Refused here with the reason before anything starts (the launch file refuses it too):
# brov2_sitl (sim:=true, the default) cannot run Lua, and MAVROS has no uplink to the script. Without
# lockstep (the script sends no thruster commands to pace the physics by) ArduSub runs on the wall
# clock, so the run is flown at real time, speed-up 1, where the script's loop was measured
# (BROV2_SPEEDUP below 1 is kept).
PLACEMENT=topside SIM=true
for arg in "$@"; do
    case "$arg" in
        placement:=*) PLACEMENT="${arg#placement:=}" ;;
        sim:=*) SIM="${arg#sim:=}" ;;
    esac
done
if [ "$PLACEMENT" = onboard ]; then
    if [ "$SIM" = true ]; then
        echo "make run: placement:=onboard needs sim:=ardusub (real ArduSub SITL runs the Lua script);" \
             "our simulator brov2_sitl (sim:=true, the default) cannot run Lua (docs/onboard.md)" >&2
        exit 2
    fi
    for arg in "$@"; do
        if [ "$arg" = "use_mavros:=true" ]; then
            echo "make run: placement:=onboard with use_mavros:=true: the uplink to the on-board script is in" \
                 "our mavlink_bridge only (docs/onboard.md)" >&2
            exit 2
        fi
    done
    if awk "BEGIN { exit !($SPEEDUP > 1) }"; then
        echo "make run: placement:=onboard: speed-up 1x instead of ${SPEEDUP}x (no lockstep on board: the physics" \
             "cannot wait for the script, which sends no thruster commands, so ArduSub runs on the wall clock; the" \
             "script's loop is measured at real time only; docs/onboard.md)"
        SPEEDUP=1
    fi
elif [ "$PLACEMENT" != topside ]; then
    echo "make run: placement:=$PLACEMENT: expected topside or onboard" >&2
    exit 2
fi
bash "$REPO/scripts/setup.sh"
# sim:=ardusub flies real ArduSub SITL: build it once (cached by source hash; ~7 min the first time).
for arg in "$@"; do
    if [ "$arg" = "sim:=ardusub" ]; then
        BROV2_ARDUSUB="$(bash "$REPO/scripts/build_ardusub.sh" | tail -n 1)/ardusub" \
            || { echo "make run: ArduSub SITL is needed for sim:=ardusub and could not be built" >&2; exit 1; }
        export BROV2_ARDUSUB
    fi
done
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
cd "$REPO"

RUN="${BROV2_RUNS_DIR:-$REPO/out/runs}/dive_$(date +%Y%m%d-%H%M%S)"
while [ -e "$RUN" ]; do RUN="${RUN}_1"; done
mkdir -p "$RUN"

# A master of our own on a free port, so that a roscore already running (or its
# /use_sim_time) does not interfere; stopped with roslaunch.
PORT=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
export ROS_MASTER_URI="http://127.0.0.1:$PORT"
export ROS_HOME="${ROS_HOME:-$HOME/.ros}"

echo "make run: flying the bundled dive in the simulator (speed-up ${SPEEDUP}x, placement $PLACEMENT; the dive lasts 150 s of vehicle time)"
echo "make run: roslaunch brov2_hybrid hybrid_autopilot.launch speedup:=$SPEEDUP log_dir:=$RUN bag_dir:=$RUN $*"
set +e
CODE_FILE="$RUN/mission_exit_code"
roslaunch -p "$PORT" brov2_hybrid hybrid_autopilot.launch "speedup:=$SPEEDUP" "log_dir:=$RUN" "bag_dir:=$RUN" \
    "exit_code_file:=$CODE_FILE" "$@" 2>&1 | tee "$RUN/roslaunch.log" | grep --line-buffered -P "mission:|csv_reader: dive|logger:|ERROR|FATAL|WARN.*(mission|bridge)|mavros_streams: (requesting|the vehicle|no |.* arrives? again)|REQUIRED process \[(?!mission-)"
STATUS=${PIPESTATUS[0]}
set -e

# The mission's outcome (empty when it left none).
MISSION_CODE=$(python -c 'import sys; from brov2_hybrid.mission.exit_codes import read_exit_code as r; c = r(sys.argv[1]); print("" if c is None else c)' "$CODE_FILE")

LOG=$(ls -t "$RUN"/*.csv 2>/dev/null | head -n 1 || true)
if [ -n "$LOG" ]; then
    python -m brov2_hybrid.analysis.run_summary "$LOG" --out "$RUN" --placement "$PLACEMENT" || true
    echo "make run: run folder $RUN"
fi
FATAL=$(grep "\[FATAL\]" "$RUN/roslaunch.log" || true)
if [ -n "$FATAL" ]; then
    echo "make run: the run stopped on an error:" >&2
    echo "$FATAL" >&2
fi
# Another required node (mavros_node: the vehicle link) was killed by a signal (kill -9, a crash):
# roslaunch shut the run down, and the mission, stopped from outside, says 130. Say which node,
# with its exit code. (A node that exits with its own code has said why: exit 1 below.)
DIED=$(python -c 'import sys; from brov2_hybrid.mission.exit_codes import required_node_died as d
r = d(open(sys.argv[1], errors="replace").read()); print("" if r is None else "%s %s" % r)' "$RUN/roslaunch.log")
if [ -n "$DIED" ] && [ "${DIED%% *}" != mission ] && case "${DIED#* }" in -* | None) true ;; *) false ;; esac \
    && { [ -z "$MISSION_CODE" ] || [ "$MISSION_CODE" = 130 ]; }; then
    CODE=$(python -c 'from brov2_hybrid.mission.exit_codes import EXIT_NODE_DIED as c; print(c)')
    echo "make run: exit $CODE: the required node ${DIED%% *} died (exit code ${DIED#* }) and roslaunch ended" \
         "the run; see $RUN/roslaunch.log" >&2
    exit "$CODE"
fi
if [ -n "$MISSION_CODE" ] && [ "$MISSION_CODE" != 0 ]; then
    MEANING=$(python -c 'import sys; from brov2_hybrid.mission.exit_codes import EXIT_MEANINGS as m; print(m.get(int(sys.argv[1]), "?"))' "$MISSION_CODE")
    echo "make run: exit $MISSION_CODE: the mission ended with code $MISSION_CODE ($MEANING); see $RUN/roslaunch.log" >&2
    exit "$MISSION_CODE"
fi
if [ -z "$LOG" ]; then
    echo "make run: exit 1: no log was written (roslaunch exit code $STATUS); see $RUN/roslaunch.log and ~/.ros/log/latest/" >&2
    exit 1
fi
if [ -z "$MISSION_CODE" ]; then
    echo "make run: exit 1: the mission did not end the run (another required node did, or it was killed;" \
         "roslaunch exit code $STATUS); see $RUN/roslaunch.log" >&2
    exit 1
fi
if [ -n "$FATAL" ]; then
    echo "make run: exit 1: a node stopped on an error (above), although the mission ended the dive" >&2
    exit 1
fi
