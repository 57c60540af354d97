#!/usr/bin/env bash
# `make reproduce`: reruns the paper's experiments and writes the figures and
# tables (the analysis tool's `reproduce` command). Extra arguments:
# make reproduce ARGS="...".
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f "$REPO/nodes/analyze" ]; then
    cmd=(python "$REPO/nodes/analyze" reproduce)
elif [ -f "$REPO/src/brov2_hybrid/analysis/__main__.py" ]; then
    cmd=(python -m brov2_hybrid.analysis reproduce)
else
    echo "make reproduce: the analysis tool (nodes/analyze or brov2_hybrid.analysis) is not there yet"
    exit 0
fi
bash "$REPO/scripts/setup.sh"
# shellcheck disable=SC1091
source "$REPO/scripts/env.sh"
cd "$REPO"
# The full run also writes the documents' generated tables (docs/results/*.json and the
# blocks of README.md and docs/*.md); a run with other settings or grids does not.
docs=(--docs)
for arg in "$@"; do
    case "$arg" in --quick|--omega-d*|--params*|--vehicle*|--mixer*|--model*|--telemetry-*|--command-delay*) docs=() ;; esac
done
echo "make reproduce: ${cmd[*]} ${docs[*]} $*"
exec "${cmd[@]}" "${docs[@]}" "$@"
