#!/usr/bin/env bash
# `make run`: a dive with the hybrid autopilot, the MAVLink bridge and the
# simulator, started by launch/hybrid_autopilot.launch. Extra arguments are
# passed to roslaunch, e.g.  make run ARGS="omega_d:=4.0".
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAUNCH="launch/hybrid_autopilot.launch"
if [ ! -f "$REPO/$LAUNCH" ]; then
    echo "make run: the hybrid autopilot launch is not there yet (issue 4): $LAUNCH is missing"
    exit 0
fi
bash "$REPO/scripts/setup.sh"
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
echo "make run: roslaunch brov2_hybrid $(basename "$LAUNCH") $*"
exec roslaunch brov2_hybrid "$(basename "$LAUNCH")" "$@"
