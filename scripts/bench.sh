#!/usr/bin/env bash
# `make bench`: runs `python -m brov2_hybrid.bench` in the project environment.
# Extra arguments: make bench ARGS="...".
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$REPO/src/brov2_hybrid/bench.py" ] && [ ! -f "$REPO/src/brov2_hybrid/bench/__main__.py" ]; then
    echo "make bench: the benchmark (brov2_hybrid.bench) is not there yet"
    exit 0
fi
bash "$REPO/scripts/setup.sh"
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
cd "$REPO"
exec python -m brov2_hybrid.bench "$@"
