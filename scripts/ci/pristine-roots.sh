#!/usr/bin/env bash
# The pristine roots' bookkeeping, shared by scripts/pristine.sh and .ci/run (which source it):
# a run that is killed outright (SIGKILL, a CI runner's hard time-out, the machine's reboot)
# never runs its clean-up, and its root stayed in /var/tmp for good, with /proc, /sys, /dev and
# the download cache still mounted in it and 11 GB of files after the suite's builds (found
# here: a CI run killed with its session left nmt-pristine.2LfLbC and a 492 MB copy of the
# cache). So each run holds an flock(2) on PATH.lock beside what it makes, for as long as it or
# any process it started runs (they inherit the lock), and the next run deletes every PATH
# whose PATH.lock nobody holds.
#
#   bash scripts/ci/pristine-roots.sh sweep [DIR]   what killed runs left in DIR (default /var/tmp)

pristine_say() { echo "pristine: $*" >&2; }

# hold_lock PATH: this shell (and what it starts) holds PATH.lock from now on. The lock is taken
# on a file of another name that is then renamed, so a sweep never sees an unlocked PATH.lock
# of a run that is starting.
hold_lock() {
  local fd
  { exec {fd}>"$1.lock.tmp"; } 2>/dev/null && flock -n "$fd" && mv "$1.lock.tmp" "$1.lock" 2>/dev/null
}

# sweep_left_behind DIR: stops the processes still rooted in, unmounts and deletes each
# DIR/nmt-pristine*.X whose X.lock is not held; roots of live runs, and anything without a lock
# (made before there were locks, or kept with NMT_PRISTINE_KEEP=1), are left alone.
sweep_left_behind() {
  local lock path fd t0
  for lock in "$1"/nmt-pristine*.lock; do
    path=${lock%.lock}
    [[ -e $path ]] || { rm -f "$lock"; continue; }
    { exec {fd}<"$lock"; } 2>/dev/null || continue  # another sweep has just deleted it
    if ! flock -n "$fd"; then exec {fd}<&-; continue; fi  # its run is going on
    t0=$SECONDS
    stop_processes_rooted_in "$path"
    unmount_all_under "$path"
    if grep -q " $path/" /proc/mounts; then
      pristine_say "cannot unmount everything under $path, left by a run that was killed (see /proc/mounts)"
    else
      rm -rf --one-file-system "$path" "$path.log" && rm -f "$lock" &&
        pristine_say "deleted $path, left by a run that was killed, in $((SECONDS - t0)) s"
    fi
    exec {fd}<&-
  done
}

# stop_processes_rooted_in DIR: processes whose /proc/PID/root is DIR get TERM, then KILL.
stop_processes_rooted_in() {
  local try p pids
  for try in TERM TERM TERM TERM TERM KILL KILL; do
    pids=()
    for p in /proc/[0-9]*; do
      [[ "$(readlink "$p/root" 2>/dev/null)" == "$1" ]] && pids+=("${p#/proc/}")
    done
    ((${#pids[@]} > 0)) || return 0
    kill -"$try" "${pids[@]}" 2>/dev/null
    sleep 1
  done
}

# unmount_all_under DIR: every mount point below DIR, the deepest first (/proc/mounts writes a
# space in a path as \040; the roots' paths have none).
unmount_all_under() {
  local m
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(awk -v p="$1/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r)
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  case "${1:-}" in
    sweep) sweep_left_behind "${2:-/var/tmp}" ;;
    *) pristine_say "usage: bash scripts/ci/pristine-roots.sh sweep [DIR]"; exit 2 ;;
  esac
fi
