#!/usr/bin/env bash
# ctest: what a CI run killed outright (SIGKILL, a runner's time-out, a reboot) leaves in
# /var/tmp is deleted by the next run. scripts/ci/pristine-roots.sh's sweep deletes a root whose
# lock nobody holds (as root, with a file system still mounted in it, as /proc is in a killed
# run's root), keeps one whose run is alive and anything without a lock, and says what it deleted.
#   tests/infra/pristine_roots.sh SOURCE_DIR
set -euo pipefail
root=$1
work=$(mktemp -d)
holder=
trap '[[ -z $holder ]] || kill $holder 2>/dev/null; umount -l "$work"/nmt-pristine.dead/proc 2>/dev/null || true; rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
source "$root/scripts/ci/pristine-roots.sh"

# A killed run's root: its lock taken the way pristine.sh takes it, then the run gone.
mkdir -p "$work/nmt-pristine.dead/proc" "$work/nmt-pristine.dead/work"
echo build >"$work/nmt-pristine.dead/work/output"
(hold_lock "$work/nmt-pristine.dead") || fail "hold_lock failed"
[[ -f $work/nmt-pristine.dead.lock && ! -e $work/nmt-pristine.dead.lock.tmp ]] || fail "no lock file beside the root"
mounted=0
if [[ $(id -u) -eq 0 ]] && mount -t tmpfs tmpfs "$work/nmt-pristine.dead/proc" 2>/dev/null; then mounted=1; fi
# A killed run's copy of the download cache.
mkdir -p "$work/nmt-pristine-cache.dead/apt"
(hold_lock "$work/nmt-pristine-cache.dead")
# A live run's root: its lock held by a process that is still running.
mkdir -p "$work/nmt-pristine.live"
(hold_lock "$work/nmt-pristine.live" && exec sleep 60) &
holder=$!
for _ in $(seq 50); do [[ -f $work/nmt-pristine.live.lock ]] && break; sleep 0.1; done
# A root without a lock (NMT_PRISTINE_KEEP=1, or made before the locks).
mkdir -p "$work/nmt-pristine.kept"

bash "$root/scripts/ci/pristine-roots.sh" sweep "$work" 2>"$work/err" || fail "the sweep failed: $(cat "$work/err")"

[[ ! -e $work/nmt-pristine.dead && ! -e $work/nmt-pristine.dead.lock ]] || fail "the killed run's root was not deleted: $(cat "$work/err")"
[[ ! -e $work/nmt-pristine-cache.dead ]] || fail "the killed run's cache copy was not deleted"
((mounted == 0)) || ! grep -q " $work/nmt-pristine.dead/" /proc/mounts || fail "a mount was left under the deleted root"
[[ -d $work/nmt-pristine.live && -f $work/nmt-pristine.live.lock ]] || fail "a live run's root was deleted"
[[ -d $work/nmt-pristine.kept ]] || fail "a root without a lock was deleted"
grep -q "deleted $work/nmt-pristine.dead, left by a run that was killed" "$work/err" || fail "no line naming the deleted root: $(cat "$work/err")"
[[ $(wc -l <"$work/err") -eq 2 ]] || fail "not one line per deleted path: $(cat "$work/err")"

# Once the live run ends, its root is the next sweep's.
{ kill "$holder"; wait "$holder"; } 2>/dev/null || true
holder=
bash "$root/scripts/ci/pristine-roots.sh" sweep "$work" 2>/dev/null
[[ ! -e $work/nmt-pristine.live ]] || fail "a root whose run has ended was kept"
[[ -d $work/nmt-pristine.kept ]] || fail "a root without a lock was deleted on the second sweep"
bash "$root/scripts/ci/pristine-roots.sh" 2>"$work/err" && fail "no usage error without a command"
grep -q usage "$work/err" || fail "no usage line"
echo "PASS: killed runs' roots deleted (mounted file system: $mounted), live and unlocked ones kept"
