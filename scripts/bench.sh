#!/usr/bin/env bash
# `make bench`: prints timing figures (asserts nothing). Core control tick and output
# stages (stock search vs its first-written baseline), simulator physics, in-process
# closed loop per firmware (vs the loop as first written) and `make reproduce` wall time
# (python -m brov2_hybrid.bench.core, brov2_hybrid.bench.simulator, brov2_hybrid.bench.loop:
# each layer times itself), then the ROS pipeline's attitude -> override latency
# and 50 Hz loop jitter (scripts/bench_ros.sh), then the soak: the whole autopilot looping
# the bundled dive for BROV2_SOAK_MIN minutes (default 10; 0 skips it) with memory growth,
# tick-cost drift and dropped ticks (scripts/bench_soak.py). Extra arguments go to
# brov2_hybrid.bench.core.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$REPO/scripts/setup.sh"
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
cd "$REPO"
python -m brov2_hybrid.bench.core "$@"
python -m brov2_hybrid.bench.simulator
python -m brov2_hybrid.bench.loop
bash "$REPO/scripts/bench_ros.sh"
python "$REPO/scripts/bench_soak.py"
