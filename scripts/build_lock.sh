# Sourced by scripts/build_ardusub.sh and scripts/build_mavros.sh (which define log and fail):
# one build at a time in a cache folder. The scratch folder, the build tools and `current` are
# shared, so a second caller waits for the first (the lock is held on fd 9 by the calling
# script and its children until it exits), then finds the first's build.
#
#   take_build_lock CACHE
take_build_lock() {
    mkdir -p "$1"
    exec 9>"$1/.build.lock"
    if ! flock -n 9; then
        log "another build holds $1/.build.lock; waiting for it"
        flock 9 || fail "could not lock $1/.build.lock"
    fi
}
