#!/usr/bin/env bash
# Set-up's failure modes, each tried for real. Run it in a pristine root, never on your own
# machine (it edits /etc/os-release and /etc/hosts, adds users and fills a small disk):
#   bash scripts/pristine.sh bash scripts/ci/check-setup.sh
# Cases: another OS; no root and no sudo; no network to Debian's archive; no network to PyPI;
# a full disk while the wheel unpacks (nothing half-unpacked is used later); an interrupted run
# (running it again finishes the job); the equivalence tests' Python references asked for without
# the wheel, or without network to PyPI; a user with sudo (works, and installs the wheel in that
# user's own ~/.cache/nmt). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
[[ -f /etc/os-release && $(id -u) -eq 0 && -d /work ]] ||
  { echo "check-setup: run it as root inside scripts/pristine.sh" >&2; exit 2; }
passed=0 failed=0
out=$(mktemp)
check() {  # check NAME EXPECTED_STATUS REGEX -- COMMAND...
  local name=$1 want=$2 regex=$3 status=0 t0=$SECONDS
  shift 4
  "$@" > "$out" 2>&1 || status=$?
  local took=$((SECONDS - t0))s
  local errors
  errors=$(grep -c '^setup: .*\(needs\|could not\|cannot\|supports\|failed\)' "$out")
  if [[ $status == "$want" ]] && grep -qE "$regex" "$out" && { ((want == 0)) || ((errors == 1)); }; then
    passed=$((passed + 1)); echo "PASS  $name (exit $status, $took)"
  else
    failed=$((failed + 1)); echo "FAIL  $name (exit $status, $took, wanted $want and /$regex/)"
  fi
  grep -E '^setup: ' "$out" | grep -vE 'will install|present|done' | sed 's/^/      /' | tail -n 3
}
home=/root/.cache/nmt/torch-$(head -n 1 scripts/torch-wheel.version)

cp /etc/os-release /tmp/os-release
sed -i 's/^VERSION_ID=.*/VERSION_ID="11"/' /etc/os-release
check "another OS (Debian 11)" 1 "supports Debian 12" -- bash scripts/setup.sh
cp /tmp/os-release /etc/os-release

useradd -m plain
check "no root and no sudo" 1 "needs root, and there is no sudo" -- runuser -l plain -c "cd $PWD && bash scripts/setup.sh"

cp /etc/hosts /tmp/hosts
echo "127.0.0.1 deb.debian.org" >> /etc/hosts
check "no network to Debian's archive" 1 "could not reach Debian's package archive" -- bash scripts/setup.sh
cp /tmp/hosts /etc/hosts

# The Debian packages for the wheel's set-up, then the wheel's own failures.
check "Debian's packages installed" 0 "setup: done" -- bash scripts/setup.sh
echo "127.0.0.1 pypi.org files.pythonhosted.org" >> /etc/hosts
check "no network to PyPI" 1 "pip could not fetch" -- env PIP_RETRIES=0 NMT_LIBTORCH=wheel bash scripts/setup.sh
cp /tmp/hosts /etc/hosts
[[ ! -e $home ]] || { echo "FAIL  $home exists after a failed set-up"; failed=$((failed + 1)); }

mkdir -p /root/.cache/nmt
mount -t tmpfs -o size=600m tmpfs /root/.cache/nmt
check "full disk while the wheel unpacks" 1 "free there" -- env NMT_LIBTORCH=wheel bash scripts/setup.sh
if [[ -e $home || -e $home.partial ]]; then
  echo "FAIL  a half-unpacked LibTorch was left in place"; failed=$((failed + 1))
fi
umount /root/.cache/nmt

# Ctrl-C while pip fetches and unpacks the wheel (3 s after pip started): SIGINT to the whole
# process group, pip included, as a terminal's Ctrl-C sends it. (A command started with & from a
# script ignores SIGINT, and so would everything it runs: python3 puts the default back first.)
setsid python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
  env NMT_LIBTORCH=wheel bash scripts/setup.sh > /dev/null 2>&1 &
pid=$!
pip_running() {  # (no procps in a minbase root: /proc by hand)
  local c
  for c in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' 2>/dev/null < "$c" | grep -q -- "pip.*--target $home.partial" && return 0
  done
  return 1
}
for _ in $(seq 600); do pip_running && break; sleep 0.1; done
sleep 3
kill -INT -- -"$pid" 2>/dev/null
wait "$pid"
if [[ -e $home ]]; then
  echo "FAIL  interrupted set-up left $home in place"; failed=$((failed + 1))
else
  passed=$((passed + 1)); echo "PASS  Ctrl-C during the unpack leaves no LibTorch in place ($(ls -d "$home"* 2>/dev/null | tr '\n' ' '))"
fi
check "re-run after an interrupted one" 0 "setup: done" -- env NMT_LIBTORCH=wheel bash scripts/setup.sh
check "a finished set-up run again" 0 "present in" -- env NMT_LIBTORCH=wheel bash scripts/setup.sh

# The equivalence tests' Python references (NMT_SETUP_REFERENCE=1, as CI's wheel build).
check "references without the wheel" 2 "needs NMT_LIBTORCH=wheel" -- env NMT_SETUP_REFERENCE=1 bash scripts/setup.sh
echo "127.0.0.1 pypi.org files.pythonhosted.org" >> /etc/hosts
check "no network to PyPI for the references" 1 "pip could not install" -- \
  env PIP_RETRIES=0 NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 bash scripts/setup.sh
cp /tmp/hosts /etc/hosts
check "the references installed" 0 "setup: done" -- env NMT_LIBTORCH=wheel NMT_SETUP_REFERENCE=1 bash scripts/setup.sh

apt-get install -y -qq sudo > /dev/null 2>&1
useradd -m builder
echo "builder ALL=(ALL) NOPASSWD:ALL" > /etc/sudoers.d/builder
cp -r . /home/builder/nmt && chown -R builder /home/builder/nmt
apt-get remove -y -qq zlib1g-dev > /dev/null 2>&1
check "a user with sudo" 0 "setup: done" -- runuser -l builder -c 'cd ~/nmt && NMT_LIBTORCH=wheel bash scripts/setup.sh'
if [[ -f /home/builder/.cache/nmt/torch-$(head -n 1 scripts/torch-wheel.version)/.nmt-complete ]] &&
  dpkg-query -W -f='${Status}' zlib1g-dev | grep -q "install ok installed"; then
  passed=$((passed + 1)); echo "PASS  sudo installed the missing package; the wheel went to the user's own ~/.cache/nmt"
else
  failed=$((failed + 1)); echo "FAIL  the sudo user's set-up did not install zlib1g-dev or its own wheel"
fi
echo "check-setup: the cases took $((SECONDS / 60))m$((SECONDS % 60))s"
echo "check-setup: $passed passed, $failed failed"
((failed == 0))
