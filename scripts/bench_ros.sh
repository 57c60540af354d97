#!/usr/bin/env bash
# ROS pipeline benchmark (attitude -> override latency, control-loop jitter); see
# scripts/bench_ros.py. `make bench` calls it after the core benchmarks.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$REPO/scripts/setup.sh" >/dev/null
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
PORT=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
export ROS_MASTER_URI="http://127.0.0.1:$PORT"
roscore -p "$PORT" >/dev/null 2>&1 &
CORE=$!
trap 'kill -INT $CORE 2>/dev/null; wait $CORE 2>/dev/null || true' EXIT
for _ in $(seq 50); do rosnode list >/dev/null 2>&1 && break; sleep 0.2; done
python "$REPO/scripts/bench_ros.py" "$@"
