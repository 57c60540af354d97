#!/usr/bin/env bash
# Build ArduSub SITL (the firmware every BlueROV2 runs, compiled for this host) once
# and cache it by source hash; print the cache folder on the last line of stdout.
#
#   scripts/build_ardusub.sh [--if-available] [SOURCE]
#
# --if-available: when no source is given or found, say so on stderr and exit 0 (what
# `make test` uses: without ArduSub the real-ArduSub tests skip, with one line each).
#
# SOURCE is one of
#   - an ArduPilot source archive (.tar.xz / .tar.gz), e.g. ../shared/ardupilot/ardupilot-*-src.tar.xz;
#   - an ArduPilot source tree (a folder holding ArduSub/ and modules/waf);
#   - a git URL (cloned, branch $BROV2_ARDUPILOT_BRANCH or Sub-4.5, with submodules; needs internet).
# Without SOURCE: $BROV2_ARDUPILOT_SRC, else the archive in ../shared/ardupilot/ beside the repo.
#
# The cache is $BROV2_ARDUSUB_CACHE (default ~/.cache/brov2_hybrid/ardusub)/<key>/ with
#   ardusub           the SITL binary (build/sitl/bin/ardusub)
#   sub-6dof.parm     ArduSub's BlueROV2 Heavy defaults (FRAME_CONFIG 2)
#   SOURCE            what it was built from
# and a link `current` to the latest build; the key is the archive's sha256, the tree's
# git HEAD (or content hash), or the clone's commit. A second call with the same
# source prints the folder at once. Build: about 7 minutes on 2 cores. One build at a time
# per cache (flock on <cache>/.build.lock): a second caller waits, then uses the first's build.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${BROV2_ARDUSUB_CACHE:-$HOME/.cache/brov2_hybrid/ardusub}"
JOBS="${BROV2_JOBS:-$(nproc)}"
IF_AVAILABLE=""
if [ "${1:-}" = "--if-available" ]; then IF_AVAILABLE=1; shift; fi
SOURCE="${1:-${BROV2_ARDUPILOT_SRC:-}}"

log() { printf 'build_ardusub: %s\n' "$*" >&2; }
fail() { printf 'build_ardusub: FAILED: %s\n' "$*" >&2; exit 1; }

if [ -z "$SOURCE" ]; then
    SOURCE=$(ls -1 "$REPO"/../shared/ardupilot/ardupilot-*-src.tar.* 2>/dev/null | head -n 1 || true)
    if [ -z "$SOURCE" ] && [ -n "$IF_AVAILABLE" ]; then
        log "no ArduPilot source in ../shared/ardupilot/ nor BROV2_ARDUPILOT_SRC: no ArduSub SITL build"
        exit 0
    fi
    [ -n "$SOURCE" ] || fail "no ArduPilot source given and none in $REPO/../shared/ardupilot/; \
pass an archive, a source tree or a git URL (e.g. https://github.com/ArduPilot/ardupilot.git), \
or set BROV2_ARDUPILOT_SRC"
fi

# Tools the build needs (Debian 12 package names in the message).
for tool in gcc g++ git python3; do
    command -v "$tool" >/dev/null 2>&1 || fail "'$tool' not found: apt-get install gcc g++ git python3-venv"
done
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null \
    || fail "python3 venv support missing: apt-get install python3-venv"

# --- the cache key -------------------------------------------------------------------
case "$SOURCE" in
    *://* | git@*)
        KIND=git
        command -v git >/dev/null || fail "git is needed to clone $SOURCE"
        KEY=$(git ls-remote "$SOURCE" "refs/heads/${BROV2_ARDUPILOT_BRANCH:-Sub-4.5}" 2>/dev/null | cut -c1-40) \
            || true
        [ -n "$KEY" ] || fail "cannot reach $SOURCE (branch ${BROV2_ARDUPILOT_BRANCH:-Sub-4.5}); \
without internet use the archive in ../shared/ardupilot/"
        ;;
    *)
        [ -e "$SOURCE" ] || fail "ArduPilot source '$SOURCE' does not exist"
        SOURCE="$(cd "$(dirname "$SOURCE")" && pwd)/$(basename "$SOURCE")"
        if [ -d "$SOURCE" ]; then
            KIND=tree
            [ -d "$SOURCE/ArduSub" ] && [ -e "$SOURCE/modules/waf/waf-light" ] \
                || fail "$SOURCE is not an ArduPilot tree with submodules (need ArduSub/ and modules/waf; \
run 'git submodule update --init --recursive' there)"
            KEY=$(git -C "$SOURCE" rev-parse HEAD 2>/dev/null || true)
            if [ -z "$KEY" ] || [ -n "$(git -C "$SOURCE" status --porcelain -uno 2>/dev/null | head -n 1)" ]; then
                KEY=tree-$(cd "$SOURCE" && find ArduSub libraries -type f \( -name '*.cpp' -o -name '*.h' \) \
                    -newer "$SOURCE/ArduSub" -print 2>/dev/null | sort | xargs -r cat | sha256sum | cut -c1-16)-$(
                    git -C "$SOURCE" rev-parse --short HEAD 2>/dev/null || echo nogit)
            fi
        else
            KIND=archive
            case "$SOURCE" in
                *.tar.xz | *.tar.gz | *.tgz | *.tar) ;;
                *) fail "$SOURCE: expected a .tar.xz / .tar.gz archive, a source folder or a git URL" ;;
            esac
            KEY=$(sha256sum "$SOURCE" | cut -c1-64)
            sums="$(dirname "$SOURCE")/SHA256SUMS"
            if [ -f "$sums" ] && grep -q "$(basename "$SOURCE")" "$sums" \
                && ! grep -q "^$KEY " "$sums"; then
                fail "$SOURCE does not match its SHA256SUMS (damaged copy?)"
            fi
        fi
        ;;
esac
OUT="$CACHE/${KEY:0:16}"
print_cached() {
    # When the build for this key is in the cache: name it and exit.
    if [ -x "$OUT/ardusub" ] && [ -f "$OUT/sub-6dof.parm" ]; then
        log "cached: $OUT/ardusub (from $(cat "$OUT/SOURCE" 2>/dev/null || echo '?'))"
        ln -sfn "$OUT" "$CACHE/current"
        echo "$OUT"
        exit 0
    fi
}
print_cached

# --- one build at a time in this cache (scripts/build_lock.sh) ------------------------
# shellcheck source=scripts/build_lock.sh
source "$REPO/scripts/build_lock.sh"
take_build_lock "$CACHE"
print_cached

# --- python build tools, in a venv of their own (empy 4 breaks the mavlink generator) --
TOOLS="$CACHE/build-venv"
if ! "$TOOLS/bin/python" -c 'import em, pexpect, future, dronecan, lxml, pymavlink' 2>/dev/null; then
    log "python build tools -> $TOOLS (empy==3.3.4 pexpect future dronecan lxml pymavlink)"
    rm -rf "$TOOLS"
    mkdir -p "$CACHE"
    /usr/bin/python3 -m venv "$TOOLS" || fail "could not create $TOOLS"
    "$TOOLS/bin/pip" install -q --disable-pip-version-check --no-input \
        empy==3.3.4 pexpect future dronecan lxml pymavlink setuptools >&2 \
        || fail "pip install of the build tools failed (needs PyPI)"
fi

# --- the source, in a scratch folder ---------------------------------------------------
WORK="$CACHE/work-${KEY:0:16}"
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
case "$KIND" in
    archive)
        log "extracting $SOURCE"
        tar -xf "$SOURCE" -C "$WORK" || fail "could not extract $SOURCE"
        SRC=$(dirname "$(find "$WORK" -maxdepth 3 -type d -name ArduSub | head -n 1)")
        [ -n "$SRC" ] && [ -d "$SRC/ArduSub" ] || fail "$SOURCE holds no ArduSub/ folder"
        ;;
    tree)
        log "copying $SOURCE"
        cp -a "$SOURCE" "$WORK/ardupilot"
        SRC="$WORK/ardupilot"
        rm -rf "$SRC/build"
        ;;
    git)
        log "cloning $SOURCE (${BROV2_ARDUPILOT_BRANCH:-Sub-4.5})"
        git clone -q --depth 1 -b "${BROV2_ARDUPILOT_BRANCH:-Sub-4.5}" "$SOURCE" "$WORK/ardupilot" \
            || fail "git clone $SOURCE failed"
        git -C "$WORK/ardupilot" submodule update -q --init --recursive --depth 1 \
            modules/waf modules/mavlink modules/DroneCAN || fail "submodule update failed"
        SRC="$WORK/ardupilot"
        ;;
esac
# waf reads `git rev-parse HEAD` for the version string: give an archive a repository.
if ! git -C "$SRC" rev-parse HEAD >/dev/null 2>&1; then
    (cd "$SRC" && git init -q && git add -A && git -c user.name=brov2 -c user.email=brov2@localhost \
        commit -q -m "ArduPilot source ($KIND $KEY)") || fail "git init of the extracted source failed"
fi

# --- configure and build ---------------------------------------------------------------
LOGF="$CACHE/build-${KEY:0:16}.log"
log "building ArduSub SITL with $JOBS job(s), about 7 min on 2 cores (log: $LOGF)"
T0=$(date +%s)
(
    cd "$SRC"
    export PATH="$TOOLS/bin:$PATH"
    nice -n 10 ./waf configure --board sitl --no-submodule-update --disable-tests
    nice -n 10 ./waf sub -j"$JOBS"
) >"$LOGF" 2>&1 || { tail -n 30 "$LOGF" >&2; fail "waf build failed (log: $LOGF)"; }
[ -x "$SRC/build/sitl/bin/ardusub" ] || fail "waf finished but build/sitl/bin/ardusub is missing (log: $LOGF)"

rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp"
cp "$SRC/build/sitl/bin/ardusub" "$OUT.tmp/ardusub"
cp "$SRC/Tools/autotest/default_params/sub-6dof.parm" "$OUT.tmp/sub-6dof.parm" \
    || fail "Tools/autotest/default_params/sub-6dof.parm missing in the source"
[ -f "$SRC/Tools/autotest/default_params/sub.parm" ] && cp "$SRC/Tools/autotest/default_params/sub.parm" "$OUT.tmp/"
printf '%s %s\n' "$KIND" "$SOURCE" >"$OUT.tmp/SOURCE"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
ln -sfn "$OUT" "$CACHE/current"
log "built in $(($(date +%s) - T0)) s: $OUT/ardusub"
echo "$OUT"
