#!/usr/bin/env bash
# Runs a command in a fresh, pristine Debian 12 root, the way CI checks every change:
#   bash scripts/pristine.sh bash scripts/test.sh
#   NMT_DEMO_TIME=2m bash scripts/pristine.sh bash scripts/demo.sh
#   bash scripts/pristine.sh --prepare     (installs mmdebstrap, if missing, and stops)
#
# The root is made anew each time by mmdebstrap (--variant=minbase bookworm, plus git, python3,
# ca-certificates and what makes and times it), so nothing installed on this machine can make a
# command pass: whatever the command needs, nmt's own scripts must install. The working tree
# (tracked files and untracked ones git does not ignore, so uncommitted changes are checked too)
# is copied to /work/<name> inside it, and ../shared, when present, is bound read-only at
# /work/shared beside it, as in CI. /proc, /sys, /dev (with /dev/shm and /dev/pts) are bound in.
#
# Kept between runs, outside the clone: only downloads, in NMT_PRISTINE_CACHE (default
# /var/cache/nmt-pristine): apt's .deb files and pip's HTTP cache (the PyTorch wheel). No
# installed package and no build output carries over: the root is deleted when the command ends
# (NMT_PRISTINE_KEEP=1 keeps it and prints where).
#
# The root takes this machine's network set-up: its /etc/resolv.conf and /etc/hosts, its CA
# bundle (added as a local CA, for a proxy that re-signs TLS), and http(s)_proxy, no_proxy,
# PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_CERT and PIP_DEFAULT_TIMEOUT from the environment.
# Needs root (mmdebstrap --mode=root and chroot); exits with the command's status.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "pristine: $*" >&2; }

if (($# == 0)); then
  say "usage: bash scripts/pristine.sh COMMAND [ARG...]   (e.g. bash scripts/test.sh)"
  exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    exec sudo --preserve-env=NMT_PRISTINE_CACHE,NMT_PRISTINE_KEEP,NMT_PRISTINE_SUITE,NMT_DEMO_TIME,NMT_LIBTORCH,NMT_JOBS,CI,http_proxy,https_proxy,no_proxy,PIP_INDEX_URL,PIP_EXTRA_INDEX_URL,PIP_CERT,PIP_DEFAULT_TIMEOUT \
      bash "$0" "$@"
  fi
  say "needs root (mmdebstrap --mode=root, chroot and bind mounts): run it as root or with sudo"
  exit 1
fi

cache=${NMT_PRISTINE_CACHE:-/var/cache/nmt-pristine}
suite=${NMT_PRISTINE_SUITE:-bookworm}
mirror=${NMT_PRISTINE_MIRROR:-http://deb.debian.org/debian}
security=${NMT_PRISTINE_SECURITY:-http://deb.debian.org/debian-security}
name=$(basename "$here")
shared=$(cd "$here/.." && pwd)/shared

# mmdebstrap from Debian's archive, the one thing installed on this machine itself (`--prepare`
# installs it and stops: .ci/run does so before it starts two of these side by side, whose two
# apt-get installs would otherwise race for this machine's dpkg lock).
if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap (Debian's package) to make the root"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap; } \
    >/dev/null || { say "could not install mmdebstrap (apt-get failed: no network to Debian's archive?)"; exit 1; }
fi
# Roots (and .ci/run's copies of the download cache) that runs killed outright left behind.
# shellcheck source=scripts/ci/pristine-roots.sh
source "$here/scripts/ci/pristine-roots.sh"
sweep_left_behind /var/tmp
[[ "$1" != --prepare ]] || exit 0

mkdir -p "$cache/apt" "$cache/pip"
root=$(mktemp -d /var/tmp/nmt-pristine.XXXXXX)
hold_lock "$root" || { say "cannot create $root.lock (full disk, or /var/tmp not writable?)"; rm -rf "$root" "$root.lock.tmp"; exit 1; }
# Processes still running in the root (their /proc/PID/root is it) are stopped before it is
# unmounted and deleted: a Ctrl-C ends the command, but apt's dpkg may go on unpacking a package
# for a moment, and what it writes after `rm -rf` has passed was left behind. The lock goes
# last: a root that cannot be unmounted keeps it, for the next run's sweep.
cleanup() {
  local status=$?
  trap '' INT TERM  # a second Ctrl-C must not stop the unmounting half-way
  stop_processes_rooted_in "$root"
  unmount_all_under "$root"  # what /proc/mounts lists under it, the way a sweep unmounts
  if grep -q " $root/" /proc/mounts; then
    say "left $root in place: something is still mounted under it (see /proc/mounts)"
  elif [[ "${NMT_PRISTINE_KEEP:-0}" == 1 ]]; then
    rm -f "$root.lock"  # kept on purpose: not for a later run to sweep
    say "kept the root in $root"
  else
    local t0=$SECONDS
    rm -rf --one-file-system "$root" && rm -f "$root.lock"
    say "deleted the root in $((SECONDS - t0)) s"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Output to a reader that is gone (`pristine.sh ... | tee log`, the tee killed by the same Ctrl-C
# or the CI runner's TERM to the group) fails instead of killing this script: a SIGPIPE on bash's
# "Terminated" line used to end it before cleanup, leaving the root with /proc, /sys, /dev and the
# download cache mounted in it. What runs in the root gets SIGPIPE's default back (`default_pipe`).
trap '' PIPE
default_pipe=(env --default-signal=PIPE)

t0=$SECONDS
say "making a $suite root (mmdebstrap, minbase) in $root"
# The .debs of earlier runs are put in before and the new ones taken out after (mmdebstrap's own
# sync-in/sync-out), so a second root costs no download.
if ! "${default_pipe[@]}" mmdebstrap --mode=root --variant=minbase --include=git,python3,ca-certificates,time \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
  --setup-hook="sync-in $cache/apt /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $cache/apt" \
  "$suite" "$root" \
  "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" \
  > "$root.log" 2>&1; then
  say "mmdebstrap failed (log: $root.log): $(grep -E '^E:' "$root.log" | head -n 1)"
  exit 1
fi
rm -f "$root.log"

# This machine's network and trust, so apt and pip inside reach what they reach outside.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/host-bundle.crt"
  "${default_pipe[@]}" chroot "$root" update-ca-certificates >/dev/null 2>&1 || say "warning: update-ca-certificates failed in the root"
fi
# apt inside keeps its downloads in the shared cache: later roots need not fetch them again.
mkdir -p "$root/root/.cache/pip"
for spec in "/proc:proc" "/sys:sys" "/dev:dev" "$cache/apt:var/cache/apt/archives" "$cache/pip:root/.cache/pip"; do
  src=${spec%%:*} dst=$root/${spec#*:}
  mkdir -p "$dst"
  mount --rbind "$src" "$dst"
done
mkdir -p "$root/work/$name"
if [[ -d "$shared" ]]; then
  mkdir -p "$root/work/shared"
  mount --bind "$shared" "$root/work/shared"
  mount -o remount,bind,ro "$root/work/shared"
fi
# The tree as git sees it: tracked files and untracked ones not ignored (no build folders).
(cd "$here" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - .git) | tar -xf - -C "$root/work/$name"
say "root ready in $((SECONDS - t0)) s; running: $*"

env_pass=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb)
for v in CI NMT_DEMO_TIME NMT_LIBTORCH NMT_JOBS NMT_THREADS http_proxy https_proxy no_proxy \
  PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT; do
  [[ -n "${!v:-}" ]] && env_pass+=("$v=${!v}")
done
[[ -n "${PIP_CERT:-}" ]] && env_pass+=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
# In the background and waited for, with this script's stdin: bash runs a trap only after the
# foreground command has ended, so a TERM to this script alone (.ci/run's clean-up sends one)
# used to wait for the whole command. A background job starts with SIGINT ignored; `env` gives
# it back its default, so Ctrl-C still reaches the command.
status=0
"${default_pipe[@]}" --default-signal=INT chroot "$root" /usr/bin/env -i "${env_pass[@]}" \
  bash -c 'cd "/work/$0" && exec "$@"' "$name" "$@" <&0 &
wait $! || status=$?
say "exit $status after $((SECONDS - t0)) s in all"
exit "$status"
