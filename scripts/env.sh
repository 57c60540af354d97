# Source this file (bash) to use the built workspace:  source scripts/env.sh
# It sources ROS Noetic (if installed in /opt/ros/noetic), the catkin workspace
# .ws/devel/setup.bash and activates the project venv .venv, so that rosrun,
# roslaunch, rostest and python3 all see ROS, the generated messages
# (brov2_hybrid.msg, brov2_hybrid.cfg, mavros_msgs) and the pip packages
# (pymavlink, pytest, ...). Run `make setup` first.

_brov2_repo="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
if [ ! -f "$_brov2_repo/.ws/devel/setup.bash" ] || [ ! -f "$_brov2_repo/.venv/bin/activate" ]; then
    echo "env.sh: $_brov2_repo is not set up yet; run 'make setup' first" >&2
else
    # ROS setup files and activate reference unset variables.
    case $- in *u*) _brov2_had_u=1; set +u ;; *) _brov2_had_u= ;; esac
    if [ -f /opt/ros/noetic/setup.bash ]; then
        # shellcheck disable=SC1091
        source /opt/ros/noetic/setup.bash
    fi
    # shellcheck disable=SC1091
    source "$_brov2_repo/.ws/devel/setup.bash"
    # shellcheck disable=SC1091
    source "$_brov2_repo/.venv/bin/activate"
    export BROV2_HYBRID_ROOT="$_brov2_repo"
    # A MAVROS of scripts/build_mavros.sh (overlaid by .ws): mavros_node loads the EGM96 geoid at
    # start; where the system has none, the build's stand-in (0 m everywhere) is used.
    _brov2_m=$(cat "$_brov2_repo/.ws/.stamps/mavros" 2>/dev/null || true)
    case "$_brov2_m" in
        real:*/ws/src/mavros_msgs)
            _brov2_m="${_brov2_m#real:}"
            _brov2_m="${_brov2_m%/ws/src/mavros_msgs}/geoids"
            if [ ! -f /usr/share/GeographicLib/geoids/egm96-5.pgm ] && [ -z "${GEOGRAPHICLIB_GEOID_PATH:-}" ] \
                && [ -f "$_brov2_m/egm96-5.pgm" ]; then
                export GEOGRAPHICLIB_GEOID_PATH="$_brov2_m"
            fi
            ;;
    esac
    unset _brov2_m
    # brov2-analyze and the other command-line wrappers
    case ":$PATH:" in *":$_brov2_repo/scripts:"*) ;; *) export PATH="$_brov2_repo/scripts:$PATH" ;; esac
    [ -n "$_brov2_had_u" ] && set -u
    unset _brov2_had_u
fi
unset _brov2_repo
