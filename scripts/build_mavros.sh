#!/usr/bin/env bash
# Build real MAVROS 1.x (mavros_node and the real mavros_msgs) from source once and cache it
# by the archive's hash; print the cache folder on the last line of stdout.
#
#   scripts/build_mavros.sh [--if-available] [ARCHIVE]
#
# --if-available: when no archive is given or found, say so on stderr and exit 0 (what
# `make test` uses: without MAVROS the real-MAVROS tests skip, with one line each).
#
# ARCHIVE is a MAVROS source archive laid out as ../shared/mavros/mavros-*-noetic-src.tar.xz:
# ws/src/ (mavros, libmavconn, mavros_msgs and the messages they need) and mavlink_src/ (the
# `mavlink` CMake package). Without ARCHIVE: $BROV2_MAVROS_SRC, else the archive in
# ../shared/mavros/ beside the repo. On ROS Noetic (Ubuntu 20.04) install ros-noetic-mavros
# instead; this script is for Debian 12, which has no MAVROS package.
#
# The cache is $BROV2_MAVROS_CACHE (default ~/.cache/brov2_hybrid/mavros)/<key>/ with
#   ws/devel/setup.bash   the catkin devel space (mavros_node, mavros_msgs); scripts/setup.sh
#                         and scripts/env.sh overlay it when it exists
#   prefix/               the `mavlink` CMake package, installed
#   geoids/egm96-5.pgm    a stand-in for the EGM96 geoid (0 m everywhere; see below)
#   SOURCE                what it was built from (written last: a folder without it is unfinished)
# and a link `current` to the latest build; the key is the archive's sha256. A second call
# prints the folder at once; one build at a time per cache (flock on <cache>/.build.lock).
#
# Steps: the Debian packages MAVROS needs (apt-get, as root), `mavlink` by cmake, then
# catkin_make with -DCATKIN_ENABLE_TESTING=OFF (a libmavconn test needs gtest) and /usr/bin
# first on PATH (Debian's libangles-dev runs FindPython3, which must find the system python).
# mavros_node loads the EGM96 geoid at start and it cannot be downloaded offline: the stand-in
# is a geoid of height 0 m everywhere, exact enough below water; scripts/env.sh points
# GEOGRAPHICLIB_GEOID_PATH at it when the system has no egm96-5.pgm.
# Build: about 15 minutes of CPU time (8 min wall on 2 idle cores), run under nice -n 19.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${BROV2_MAVROS_CACHE:-$HOME/.cache/brov2_hybrid/mavros}"
JOBS="${BROV2_JOBS:-$(nproc)}"
IF_AVAILABLE=""
if [ "${1:-}" = "--if-available" ]; then IF_AVAILABLE=1; shift; fi
SOURCE="${1:-${BROV2_MAVROS_SRC:-}}"

log() { printf 'build_mavros: %s\n' "$*" >&2; }
fail() { printf 'build_mavros: FAILED: %s\n' "$*" >&2; exit 1; }

if [ -z "$SOURCE" ]; then
    SOURCE=$(ls -1 "$REPO"/../shared/mavros/mavros-*-src.tar.* 2>/dev/null | head -n 1 || true)
    if [ -z "$SOURCE" ] && [ -n "$IF_AVAILABLE" ]; then
        log "no MAVROS source in ../shared/mavros/ nor BROV2_MAVROS_SRC: no MAVROS build"
        exit 0
    fi
    [ -n "$SOURCE" ] || fail "no MAVROS source archive given and none in $REPO/../shared/mavros/; \
pass one or set BROV2_MAVROS_SRC (on ROS Noetic: apt-get install ros-noetic-mavros instead)"
fi
[ -f "$SOURCE" ] || fail "MAVROS source '$SOURCE' is not a file"
case "$SOURCE" in
    *.tar.xz | *.tar.gz | *.tgz | *.tar) ;;
    *) fail "$SOURCE: expected a .tar.xz / .tar.gz archive holding ws/src/ and mavlink_src/" ;;
esac
SOURCE="$(cd "$(dirname "$SOURCE")" && pwd)/$(basename "$SOURCE")"

# --- the cache key -------------------------------------------------------------------
KEY=$(sha256sum "$SOURCE" | cut -c1-64)
sums="$(dirname "$SOURCE")/SHA256SUMS"
if [ -f "$sums" ] && grep -q "$(basename "$SOURCE")" "$sums" && ! grep -q "^$KEY " "$sums"; then
    fail "$SOURCE does not match its SHA256SUMS (damaged copy?)"
fi
OUT="$CACHE/${KEY:0:16}"
print_cached() {
    # When the build for this key is in the cache: name it and exit.
    if [ -f "$OUT/SOURCE" ] && [ -f "$OUT/ws/devel/setup.bash" ] && [ -x "$OUT/ws/devel/lib/mavros/mavros_node" ]; then
        log "cached: $OUT (from $(cat "$OUT/SOURCE"))"
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

# --- Debian packages ---------------------------------------------------------------------
PACKAGES=(
    libdiagnostic-updater-dev libtf2-eigen-dev libtf2-ros-dev ros-std-srvs libstd-srvs-dev
    ros-nav-msgs libnav-msgs-dev ros-trajectory-msgs libtrajectory-msgs-dev ros-diagnostic-msgs
    libdiagnostic-msgs-dev libgeometry-msgs-dev libsensor-msgs-dev libstd-msgs-dev
    ros-geometry-msgs ros-sensor-msgs libangles-dev librosconsole-bridge-dev libconsole-bridge-dev
    libgeographiclib-dev geographiclib-tools libeigen3-dev python3-genpy python3-gencpp
    python3-genlisp ros-message-generation ros-message-runtime python3-lxml python3-future
    libboost-system-dev ros-cmake-modules python3-rospy cmake make g++ catkin
    # find_package(catkin COMPONENTS ...) of mavros: not pulled in by the above on a fresh machine
    # (seen: "Could NOT find pluginlib" when this ran before setup.sh had installed rviz)
    pluginlib-dev libroscpp-dev
)
missing=()
for pkg in "${PACKAGES[@]}"; do
    case "$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)" in
        ii*) ;;
        *) missing+=("$pkg") ;;
    esac
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        fail "Debian packages missing and not root: apt-get install ${missing[*]}"
    fi
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # (waits up to 10 min for another apt-get to finish)
    APT=("${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600)
    "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >"$CACHE/apt.log" 2>&1 \
        || { "${APT[@]}" update -qq >>"$CACHE/apt.log" 2>&1 \
            && "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >>"$CACHE/apt.log" 2>&1; } \
        || { tail -n 20 "$CACHE/apt.log" >&2; fail "apt-get install failed (log: $CACHE/apt.log)"; }
fi

# --- the source, extracted where it is built (the devel space keeps absolute paths) -----
rm -rf "$OUT"
mkdir -p "$OUT"
log "extracting $SOURCE into $OUT"
tar -xf "$SOURCE" -C "$OUT" || fail "could not extract $SOURCE"
[ -d "$OUT/ws/src/mavros" ] && [ -d "$OUT/ws/src/mavros_msgs" ] && [ -f "$OUT/mavlink_src/CMakeLists.txt" ] \
    || fail "$SOURCE does not hold ws/src/mavros, ws/src/mavros_msgs and mavlink_src/"

LOGF="$CACHE/build-${KEY:0:16}.log"
log "building MAVROS with $JOBS job(s) under nice -n 19: about 15 min of CPU time (log: $LOGF)"
T0=$(date +%s)
(
    set -e
    export PATH="/usr/bin:/bin:/usr/sbin:/sbin${PATH:+:$PATH}"
    export ROS_PYTHON_VERSION=3
    unset PYTHONPATH VIRTUAL_ENV
    if [ -f /opt/ros/noetic/setup.bash ]; then
        set +u
        # shellcheck disable=SC1091
        source /opt/ros/noetic/setup.bash
        set -u
    fi
    echo "== mavlink (cmake install into $OUT/prefix)"
    mkdir -p "$OUT/mavlink_build"
    cd "$OUT/mavlink_build"
    nice -n 19 cmake "$OUT/mavlink_src" -DCMAKE_INSTALL_PREFIX="$OUT/prefix" -DPython3_EXECUTABLE=/usr/bin/python3
    nice -n 19 make install
    echo "== catkin_make"
    cd "$OUT/ws"
    export CMAKE_PREFIX_PATH="$OUT/prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    nice -n 19 catkin_make -DPYTHON_EXECUTABLE=/usr/bin/python3 -DCMAKE_BUILD_TYPE=Release \
        -DCATKIN_ENABLE_TESTING=OFF -j"$JOBS"
) >"$LOGF" 2>&1 || { tail -n 30 "$LOGF" >&2; fail "the MAVROS build failed (log: $LOGF)"; }
[ -x "$OUT/ws/devel/lib/mavros/mavros_node" ] || fail "catkin_make finished but mavros_node is missing (log: $LOGF)"
rm -rf "$OUT/mavlink_build"

# --- the EGM96 stand-in: P5 PGM, 5' grid, height = offset + scale * sample = -108 + 0.003 * 36000 = 0 m
mkdir -p "$OUT/geoids"
/usr/bin/python3 - "$OUT/geoids/egm96-5.pgm" <<'EOF' || fail "could not write the geoid stand-in"
import struct, sys
width, height, sample = 4320, 2161, 36000
with open(sys.argv[1], "wb") as f:
    f.write(b"P5\n# Offset -108\n# Scale 0.003\n%d %d\n65535\n" % (width, height))
    f.write(struct.pack(">H", sample) * (width * height))
EOF

printf 'archive %s\n' "$SOURCE" >"$OUT/SOURCE"
ln -sfn "$OUT" "$CACHE/current"
log "built in $(($(date +%s) - T0)) s: $OUT"
echo "$OUT"
