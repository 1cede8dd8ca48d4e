# Sourced by bench-two-hosts.sh and fault-two-hosts.sh: two "hosts" on this machine, network
# namespaces $h0 (10.77.0.1, veth0) and $h1 (10.77.0.2, veth1) joined by a veth pair, removed
# on exit with $work. Needs root and iproute2.
[[ $(id -u) == 0 ]] || { echo "$(basename "$0"): needs root (network namespaces)" >&2; exit 2; }
command -v ip > /dev/null && command -v tc > /dev/null || { echo "$(basename "$0"): needs ip and tc (iproute2)" >&2; exit 2; }
work=$(mktemp -d /tmp/nmt-two-hosts-XXXXXX)
h0=nmt-h0-$$ h1=nmt-h1-$$
two_hosts_cleanup() {
  ip netns pids "$h0" 2> /dev/null | xargs -r kill -9 2> /dev/null || true
  ip netns pids "$h1" 2> /dev/null | xargs -r kill -9 2> /dev/null || true
  ip netns del "$h0" 2> /dev/null || true
  ip netns del "$h1" 2> /dev/null || true
  rm -rf "$work"
}
trap two_hosts_cleanup EXIT
ip netns add "$h0" && ip netns add "$h1"
ip link add veth0 netns "$h0" type veth peer name veth1 netns "$h1"
ip -n "$h0" addr add 10.77.0.1/24 dev veth0 && ip -n "$h1" addr add 10.77.0.2/24 dev veth1
for n in "$h0" "$h1"; do ip -n "$n" link set lo up; done
ip -n "$h0" link set veth0 up && ip -n "$h1" link set veth1 up

# Whether tc can add delay here (netem); tbf alone limits the rate only.
netem=no
if ip netns exec "$h0" tc qdisc add dev veth0 root netem delay 0.2ms 2> /dev/null; then
  netem=yes
  ip netns exec "$h0" tc qdisc del dev veth0 root
fi

link_limit() {  # RATE ("" = none): both directions
  local rate=$1 ns dev ns_dev
  for ns_dev in "$h0:veth0" "$h1:veth1"; do
    ns=${ns_dev%%:*} dev=${ns_dev##*:}
    ip netns exec "$ns" tc qdisc del dev "$dev" root 2> /dev/null || true
    [[ -z "$rate" ]] && continue
    if [[ $netem == yes ]]; then
      ip netns exec "$ns" tc qdisc add dev "$dev" root netem delay 0.2ms rate "$rate"
    else
      ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$rate" burst 1mb latency 100ms
    fi
  done
}

# rank_on HOST RANK ADDR ENV... -- NMT-ARGS...: one rank of a 2-rank job in namespace HOST.
rank_on() {
  local host=$1 rank=$2 addr=$3 ifname
  shift 3
  [[ $host == "$h0" ]] && ifname=veth0 || ifname=veth1
  ip netns exec "$host" env RANK="$rank" WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR="$addr" MASTER_PORT=29611 \
    GLOO_SOCKET_IFNAME=$ifname "$@"
}
