#!/usr/bin/env bash
# `make reproduce`: reruns the paper's experiments and writes the figures and
# tables (the analysis tool's `reproduce` command). Extra arguments:
# make reproduce ARGS="...".
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd=(python -m brov2_hybrid.analysis reproduce)
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
