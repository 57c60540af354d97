#!/usr/bin/env bash
# Run all checks (pytest, rostest, catkin_lint, vermin) in the project
# environment; the last line printed is "N passed, N failed". Run `make setup`
# (scripts/setup.sh) first; `make test` does both.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$REPO/.ws/devel/setup.bash" ] || [ ! -x "$REPO/.venv/bin/python" ]; then
    echo "run_tests: not set up; run 'make setup' first" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
exec "$REPO/.venv/bin/python" "$REPO/scripts/run_tests.py" "$@"
