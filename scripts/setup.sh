#!/usr/bin/env bash
# Set up everything brov2_hybrid needs, idempotently (called by `make setup`).
#
#   1. ROS 1: /opt/ros/noetic if present, else Debian's own ROS 1 packages (apt).
#   2. .venv: a venv of the system python3 with --system-site-packages (so ROS
#      and the core share the OS numpy), plus the pins in requirements.txt.
#   3. .ws: a catkin workspace, src/brov2_hybrid -> this repo, and
#      src/mavros_msgs -> third_party/mavros_msgs only where the real
#      mavros_msgs is not installed; built with catkin_make. A MAVROS build of
#      scripts/build_mavros.sh (~/.cache/brov2_hybrid/mavros/current) is overlaid
#      when it exists (BROV2_NO_MAVROS=1: not), so the real mavros_msgs and
#      mavros_node come with it.
#
# Each step is skipped when its inputs have not changed (hashes kept in
# .ws/.stamps and .venv/.brov2-requirements.sha256), so a second run is quick.
# Environment knobs: BROV2_FORCE_BUILD=1 rebuilds the workspace,
# BROV2_JOBS=N sets catkin_make's -j (default: number of cores).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

WS="$REPO/.ws"
VENV="$REPO/.venv"
STAMPS="$WS/.stamps"
SYS_PY=/usr/bin/python3
NOETIC=/opt/ros/noetic
STEP="start"
T0=$(date +%s)

log() { printf 'setup: %s\n' "$*"; }
REPORTED=""
fail() {
    printf 'setup: FAILED in step "%s": %s\n' "$STEP" "$*" >&2
    REPORTED=1
    exit 1
}
on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ -z "$REPORTED" ]; then
        printf 'setup: FAILED in step "%s" (exit code %d)\n' "$STEP" "$rc" >&2
    fi
}
trap on_exit EXIT

sha() { sha256sum | cut -c1-64; }
# hash_files FILE...: hash of names and contents of the files that exist.
hash_files() {
    local f
    for f in "$@"; do
        if [ -f "$f" ]; then
            printf '%s\n' "$f"
            cat "$f"
        fi
    done | sha
}
stamp_ok() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMPS" && printf '%s' "$2" >"$STAMPS/$1"; }
source_quietly() {
    # ROS setup files reference unset variables; relax -u while sourcing.
    set +u
    # shellcheck disable=SC1090
    source "$1"
    set -u
}

# --------------------------------------------------------------------------
STEP="ros"
# Debian 12's own ROS 1 packages (Noetic API) and what the project needs from the OS.
DEBIAN_ROS_PACKAGES=(
    ros-core-dev catkin catkin-lint rosbash
    ros-message-generation ros-message-runtime
    python3-rospy python3-rostest python3-rosbag python3-roslaunch python3-rosnode
    python3-rostopic python3-rosparam python3-rosservice
    python3-dynamic-reconfigure libdynamic-reconfigure-config-init-mutex-dev
    python3-tf2-ros python3-tf2-geometry-msgs
    python3-std-msgs python3-geometry-msgs python3-sensor-msgs
    libstd-msgs-dev libgeometry-msgs-dev libsensor-msgs-dev ros-geometry-msgs ros-sensor-msgs
    rviz python3-visualization-msgs ros-visualization-msgs
)
# ROS Noetic (Ubuntu 20.04, packages.ros.org) equivalents, checked when /opt/ros/noetic exists.
NOETIC_ROS_PACKAGES=(
    ros-noetic-ros-base ros-noetic-rostest ros-noetic-rosbag ros-noetic-dynamic-reconfigure
    ros-noetic-tf2-ros ros-noetic-geometry-msgs ros-noetic-sensor-msgs python3-catkin-lint
    ros-noetic-rviz ros-noetic-visualization-msgs
)
COMMON_PACKAGES=(
    python3-numpy python3-scipy python3-matplotlib python3-yaml python3-lxml
    python3-venv python3-pip cmake make g++
    xvfb imagemagick
    lua5.3
)

missing_packages() {
    # Print the packages of "$@" that dpkg does not report as installed.
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
        case "$status" in
            ii*) ;;
            *) printf '%s\n' "$pkg" ;;
        esac
    done
}

apt_install() {
    local sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo_cmd=(sudo)
            if [ ! -t 0 ]; then sudo_cmd=(sudo -n); fi
        else
            fail "packages missing ($*) and not root, and sudo is not available; install them as root, e.g.: apt-get install $*"
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || fail "packages missing ($*) and apt-get not found (need Debian 12, or Ubuntu 20.04 with ROS Noetic)"
    export DEBIAN_FRONTEND=noninteractive
    local lists
    lists=$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' 2>/dev/null | head -n 1 || true)
    if [ -z "$lists" ]; then
        log "apt-get update (no package lists yet)"
        "${sudo_cmd[@]}" apt-get update -qq || fail "apt-get update failed"
    fi
    log "apt-get install $*"
    if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@" >/tmp/brov2-apt.log 2>&1; then
        log "apt-get install failed; running apt-get update and trying once more"
        "${sudo_cmd[@]}" apt-get update -qq || fail "apt-get update failed"
        "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@" >/tmp/brov2-apt.log 2>&1 \
            || { tail -n 20 /tmp/brov2-apt.log >&2; fail "apt-get install failed (log: /tmp/brov2-apt.log)"; }
    fi
}

if [ -f "$NOETIC/setup.bash" ]; then
    ROS_FLAVOUR=noetic
    wanted=("${NOETIC_ROS_PACKAGES[@]}" "${COMMON_PACKAGES[@]}")
else
    ROS_FLAVOUR=debian
    if [ ! -f /etc/debian_version ]; then
        fail "no $NOETIC and this is not Debian: install ROS Noetic first"
    fi
    wanted=("${DEBIAN_ROS_PACKAGES[@]}" "${COMMON_PACKAGES[@]}")
fi
command -v dpkg-query >/dev/null 2>&1 || fail "dpkg-query not found (need Debian 12, or Ubuntu 20.04 with ROS Noetic)"
mapfile -t missing < <(missing_packages "${wanted[@]}")
if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
    log "ros: installed ${#missing[@]} package(s)"
else
    log "ros: all ${#wanted[@]} OS packages present ($ROS_FLAVOUR)"
fi
if [ "$ROS_FLAVOUR" = noetic ]; then
    source_quietly "$NOETIC/setup.bash"
fi
command -v catkin_make >/dev/null 2>&1 || fail "catkin_make not found after installing ROS"
[ -x "$SYS_PY" ] || fail "$SYS_PY not found"

# --------------------------------------------------------------------------
STEP="venv"
REQ_HASH=$( { "$SYS_PY" -c 'import sys; print(sys.version)'; echo "system-site-packages"; cat requirements.txt requirements-nodeps.txt; } | sha)
REQ_STAMP="$VENV/.brov2-requirements.sha256"
if [ -x "$VENV/bin/python" ] && [ -f "$REQ_STAMP" ] && [ "$(cat "$REQ_STAMP")" = "$REQ_HASH" ] \
    && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "venv: up to date ($VENV)"
else
    if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        log "venv: creating $VENV ($SYS_PY --system-site-packages)"
        rm -rf "$VENV"
        "$SYS_PY" -m venv --system-site-packages "$VENV" \
            || fail "could not create the venv (is python3-venv installed?)"
    fi
    log "venv: pip install -r requirements.txt"
    # (the grep drops pip's notes about configured local index folders that do not exist)
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input -r requirements.txt 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; } \
        || fail "pip install -r requirements.txt failed"
    log "venv: pip install --no-deps -r requirements-nodeps.txt"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-deps -r requirements-nodeps.txt 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; } \
        || fail "pip install --no-deps -r requirements-nodeps.txt failed"
    printf '%s' "$REQ_HASH" >"$REQ_STAMP"
fi
"$VENV/bin/python" -c 'import numpy, scipy, matplotlib, yaml, rospy, pymavlink.mavutil' \
    || fail "the venv cannot import numpy, scipy, matplotlib, yaml, rospy and pymavlink"

# --------------------------------------------------------------------------
STEP="workspace"
# .ws/src/brov2_hybrid is a directory of symlinks to the repo's top-level
# entries (all but the hidden ones: .ws, .venv, .git ...). A single symlink to
# the repo root would make the package contain its own workspace (.ws/devel),
# and rosrun, which searches the package with `find -L`, would then see every
# node twice more and stop to ask which one to run.
PKG_DIR="$WS/src/brov2_hybrid"
mkdir -p "$WS/src"
if [ -L "$PKG_DIR" ]; then rm -f "$PKG_DIR"; fi
mkdir -p "$PKG_DIR"
for link in "$PKG_DIR"/*; do
    if [ -L "$link" ] && [ ! -e "$link" ]; then rm -f "$link"; fi
done
for entry in "$REPO"/*; do
    [ -e "$entry" ] || continue
    name=$(basename "$entry")
    if [ -e "$PKG_DIR/$name" ] && [ ! -L "$PKG_DIR/$name" ]; then
        fail "$PKG_DIR/$name is a real file or folder, not a link to the repo; remove it"
    fi
    ln -sfn "../../../$name" "$PKG_DIR/$name"
done

# MAVROS built by scripts/build_mavros.sh: the workspace is built on top of its devel space.
MAVROS_BUILD="${BROV2_MAVROS_CACHE:-$HOME/.cache/brov2_hybrid/mavros}/current"
if [ -z "${BROV2_NO_MAVROS:-}" ] && [ -f "$MAVROS_BUILD/SOURCE" ] && [ -f "$MAVROS_BUILD/ws/devel/setup.bash" ]; then
    MAVROS_DEVEL="$(readlink -f "$MAVROS_BUILD")/ws/devel"
    log "workspace: overlaying the MAVROS build $MAVROS_DEVEL"
    source_quietly "$MAVROS_DEVEL/setup.bash"
fi

# The real mavros_msgs, if installed (ignoring this repo's own stand-in, which
# may be on ROS_PACKAGE_PATH when scripts/env.sh was sourced).
real_mavros_msgs() {
    local rpp="" entry path
    IFS=':' read -r -a entries <<<"${ROS_PACKAGE_PATH:-}"
    for entry in "${entries[@]}"; do
        case "$(readlink -f "$entry" 2>/dev/null || echo "$entry")" in
            "$REPO" | "$REPO"/*) ;;
            *) rpp="${rpp:+$rpp:}$entry" ;;
        esac
    done
    if [ -f "$NOETIC/share/mavros_msgs/package.xml" ]; then
        echo "$NOETIC/share/mavros_msgs"
        return 0
    fi
    command -v rospack >/dev/null 2>&1 || return 1
    path=$(ROS_PACKAGE_PATH="$rpp" rospack find mavros_msgs 2>/dev/null) || return 1
    case "$(readlink -f "$path")" in
        "$REPO" | "$REPO"/*) return 1 ;;
    esac
    echo "$path"
}
if real=$(real_mavros_msgs); then
    MAVROS_CHOICE="real:$real"
    rm -f "$WS/src/mavros_msgs"
    log "workspace: real mavros_msgs found at $real; stand-in not linked"
else
    MAVROS_CHOICE="standin"
    ln -sfn ../../third_party/mavros_msgs "$WS/src/mavros_msgs"
    log "workspace: no real mavros_msgs; linked the stand-in third_party/mavros_msgs"
fi

# A switch between the stand-in and the real mavros_msgs leaves generated code
# of the other one in devel/; start the workspace build afresh.
if { [ -f "$STAMPS/mavros" ] && [ "$(cat "$STAMPS/mavros")" != "$MAVROS_CHOICE" ]; } \
    || { [ "$MAVROS_CHOICE" != standin ] && [ -d "$WS/devel/share/mavros_msgs" ]; }; then
    log "workspace: mavros_msgs source changed; removing $WS/build and $WS/devel"
    rm -rf "$WS/build" "$WS/devel"
fi
stamp_set mavros "$MAVROS_CHOICE"

# --------------------------------------------------------------------------
STEP="build"
# Inputs that need catkin_make: build files, definitions, and the *names* of
# globbed files (node scripts and python sources are relayed, not copied).
BUILD_HASH=$( {
    echo "$ROS_FLAVOUR $MAVROS_CHOICE $VENV/bin/python"
    hash_files CMakeLists.txt package.xml setup.py msg/*.msg cfg/*.cfg \
        third_party/mavros_msgs/CMakeLists.txt third_party/mavros_msgs/package.xml \
        third_party/mavros_msgs/msg/*.msg third_party/mavros_msgs/srv/*.srv
    ls -1 nodes test/*.test 2>/dev/null || true
    find src -name __init__.py 2>/dev/null | sort || true
} | sha)
if [ -z "${BROV2_FORCE_BUILD:-}" ] && stamp_ok build "$BUILD_HASH" && [ -f "$WS/devel/setup.bash" ]; then
    log "build: workspace up to date ($WS)"
else
    log "build: catkin_make in $WS (log: $WS/catkin_make.log)"
    (
        cd "$WS"
        # The venv's python builds the workspace, so the devel-space node relays
        # (devel/lib/brov2_hybrid/*) run with it and see pymavlink as well as ROS.
        export PATH="$VENV/bin:$PATH"
        # --force-cmake: the inputs changed, and cmake's globs (nodes/*, test/*.test)
        # must see new files.
        catkin_make --force-cmake -DPYTHON_EXECUTABLE="$VENV/bin/python3" -DCATKIN_ENABLE_TESTING=ON \
            -DCMAKE_BUILD_TYPE=Release -j"${BROV2_JOBS:-$(nproc)}" >"$WS/catkin_make.log" 2>&1
    ) || { tail -n 40 "$WS/catkin_make.log" >&2; fail "catkin_make failed (log: $WS/catkin_make.log)"; }
    stamp_set build "$BUILD_HASH"
fi
[ -f "$WS/devel/setup.bash" ] || fail "$WS/devel/setup.bash missing after the build"

STEP="kernels"
# numba-compiled kernels (stepper, stock mixers, stock search; brov2_hybrid.jit): compiled
# once per source version into ~/.cache/brov2_hybrid/numba (BROV2_NUMBA_CACHE), so that no
# node or test waits for numba; about a second when the cache is warm.
PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}" "$VENV/bin/python3" -m brov2_hybrid.kernels \
    || fail "compiling the numba kernels failed (BROV2_NO_JIT=1 runs them as Python)"

STEP="done"
log "ready in $(($(date +%s) - T0)) s; use it with: source scripts/env.sh"
