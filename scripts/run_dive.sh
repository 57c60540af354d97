#!/usr/bin/env bash
# `make run`: fly the bundled AR-pilot dive with the hybrid autopilot in the simulator,
# then leave the tick log, a summary (IAE and energy per axis) and plots in a run
# folder and print where they are.
#
#   make run                                   # bundled dive, omega_d 3, 2x real time
#   make run ARGS="omega_d:=4.0 record_bag:=true"
#   BROV2_SPEEDUP=1 make run                   # real time
#
# Extra arguments are roslaunch arguments of launch/hybrid_autopilot.launch.
# The run folder is out/runs/dive_<date>-<time>/ (never reused).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEEDUP="${BROV2_SPEEDUP:-2}"

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

RUN="$REPO/out/runs/dive_$(date +%Y%m%d-%H%M%S)"
while [ -e "$RUN" ]; do RUN="${RUN}_1"; done
mkdir -p "$RUN"

# A master of our own on a free port, so that a roscore already running (or its
# /use_sim_time) does not interfere; stopped with roslaunch.
PORT=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
export ROS_MASTER_URI="http://127.0.0.1:$PORT"
export ROS_HOME="${ROS_HOME:-$HOME/.ros}"

echo "make run: flying the bundled dive in the simulator (speed-up ${SPEEDUP}x; the dive lasts 150 s of vehicle time)"
echo "make run: roslaunch brov2_hybrid hybrid_autopilot.launch speedup:=$SPEEDUP log_dir:=$RUN bag_dir:=$RUN $*"
set +e
roslaunch -p "$PORT" brov2_hybrid hybrid_autopilot.launch "speedup:=$SPEEDUP" "log_dir:=$RUN" "bag_dir:=$RUN" \
    "$@" 2>&1 | tee "$RUN/roslaunch.log" | grep --line-buffered -E "mission:|csv_reader: dive|logger:|ERROR|FATAL|WARN.*(mission|bridge)"
STATUS=${PIPESTATUS[0]}
set -e

LOG=$(ls -t "$RUN"/*.csv 2>/dev/null | head -n 1 || true)
if [ -z "$LOG" ]; then
    echo "make run: no log was written (roslaunch exit code $STATUS); see $RUN/roslaunch.log and ~/.ros/log/latest/" >&2
    exit 1
fi
if ! grep -q "mission: disarmed" "$RUN/roslaunch.log" 2>/dev/null && ! grep -q "dive finished" "$RUN/roslaunch.log"; then
    echo "make run: the dive did not finish (roslaunch exit code $STATUS); see $RUN/roslaunch.log" >&2
fi
python -m brov2_hybrid.analysis.run_summary "$LOG" --out "$RUN" || true
echo "make run: run folder $RUN"
if grep -q "\[FATAL\]" "$RUN/roslaunch.log"; then
    echo "make run: the run stopped on an error:" >&2
    grep "\[FATAL\]" "$RUN/roslaunch.log" >&2
    exit 1
fi
