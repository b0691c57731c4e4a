#!/usr/bin/env bash
# The async cluster (1 chief, 1 shard, 2 workers, batch 50; the reference MLP unless the extra
# options name another model, e.g. -- --model.preset='"cnn"') on an emulated network:
# every node in its own network namespace, joined through a bridge by veth pairs whose both ends
# are shaped with tc to the link rate (and delay, where the kernel has sch_netem). Runs the same
# number of steps with fp32, bf16, top-k 1% of the gradients (topk) and top-k 1% of the gradients
# and of the values' changes (topk-both) on each link and prints examples/s, tensor bytes per
# step and test accuracy, with the ratios to fp32 measured in this run. fp32-onepush is fp32
# with cluster.push-bucket-bytes = 0 (one push per shard after backprop: no overlap); topk-mc
# is topk with cluster.momentum-correction; fp32-tls is fp32 with every connection over TLS
# (local-cluster.sh --tls).
#
#   sudo bench/netem_cluster.sh [--steps N] [--rates "1gbit 10gbit"] [--delay 0.1ms] [--topk-ratio R]
#                               [--settings "fp32 fp32-onepush bf16 topk topk-both"] [--results FILE]
#                               [-- extra actorps-node options]
# --results FILE appends one line per run: RATE SETTING EXAMPLES/S BYTES/STEP PUSHED/STEP ACCURACY.
# The rate "loopback" runs the same cluster on 127.0.0.1 with no namespaces; every other rate's
# runs are then also compared with it (e.g. --rates "loopback 10gbit": the emulated link's cost).
#
# Needs root (ip netns, tc) and a build (scripts/build.sh). Traffic stays inside the namespaces
# this script makes (10.99.0.0/24); it removes every namespace it made on exit, also on Ctrl-C.
# Without sch_netem in the kernel (as on this project's VMs) tc shapes the rate with tbf and no
# delay is added; the script says so in its output.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=1500 rates="1gbit 10gbit" delay=0.1ms topk_ratio=0.01 settings="fp32 bf16 topk topk-both" results=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --topk-ratio) topk_ratio=$2; shift 2 ;;
    --settings) settings=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "netem_cluster: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=("$@")
[[ $(id -u) -eq 0 ]] || { echo "netem_cluster: needs root (ip netns, tc)" >&2; exit 2; }
for tool in ip tc; do
  command -v "$tool" > /dev/null || { echo "netem_cluster: '$tool' not found (Debian package iproute2)" >&2; exit 2; }
done
[[ -x build/bin/actorps-node ]] || { echo "netem_cluster: build/bin/actorps-node not found: run scripts/build.sh" >&2; exit 2; }
/usr/bin/python3 -c 'import json' || exit 2

prefix="aps$$-" # namespaces of this run: aps<pid>-sw (the bridge), aps<pid>-<node>
nodes=(chief ps-0 worker-0 worker-1)
made=()
remove_namespaces() {
  for ns in "${made[@]}"; do ip netns del "$ns" 2> /dev/null || true; done
  made=()
}
tmp=$(mktemp -d)
trap 'remove_namespaces; rm -rf "$tmp"' EXIT
trap 'echo "netem_cluster: interrupted; removing the namespaces" >&2; exit 130' INT TERM

# shape DEV NS RATE: the link's rate (and delay with netem) on the egress of DEV in NS
netem_ok=unknown
shape() {
  if [[ $netem_ok != no ]] && tc -n "$2" qdisc add dev "$1" root netem delay "$delay" rate "$3" limit 10000 2> /dev/null; then
    netem_ok=yes
    return
  fi
  netem_ok=no
  tc -n "$2" qdisc add dev "$1" root tbf rate "$3" burst 256kb latency 10ms
}

# network RATE: a fresh bridge and one namespace per node, every link shaped to RATE both ways
network() {
  remove_namespaces
  local sw="${prefix}sw" i=1
  ip netns add "$sw" && made+=("$sw")
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  for node in "${nodes[@]}"; do
    local ns="$prefix$node"
    ip netns add "$ns" && made+=("$ns")
    ip link add "apn$$x$i" type veth peer name "aps$$x$i"
    ip link set "apn$$x$i" netns "$ns" name eth0
    ip link set "aps$$x$i" netns "$sw" name "port$i"
    ip -n "$sw" link set "port$i" master br0
    ip -n "$sw" link set "port$i" up
    ip -n "$ns" addr add "10.99.0.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    shape eth0 "$ns" "$1"
    shape "port$i" "$sw" "$1"
    addrs+=(--addr "$node=10.99.0.$i")
    i=$((i + 1))
  done
}

field() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2], 0))" "$1" "$2"; }

declare -A rate_of bytes_of acc_of
echo "netem_cluster: async, 1 shard, 2 workers, ${extra[*]:-reference MLP}, batch 50, $steps steps per run, CPU backend"
for rate in $rates; do
  addrs=()
  where=()
  if [[ $rate == loopback ]]; then
    remove_namespaces
    echo "== 127.0.0.1 (no namespaces, no shaping)"
  else
  network "$rate"
  where=(--netns-prefix "$prefix" "${addrs[@]}")
  if [[ $netem_ok == yes ]]; then
    echo "== links of $rate, $delay delay each way (netem)"
  else
    echo "== links of $rate (tbf; this kernel has no sch_netem, so no delay is added)"
  fi
  fi
  for setting in $settings; do
    case "$setting" in
      fp32) opts=(--cluster.wire-precision='"fp32"') ;;
      fp32-tls) opts=(--cluster.wire-precision='"fp32"') ;; # (and every connection over TLS, below)
      fp32-onepush) opts=(--cluster.wire-precision='"fp32"' --cluster.push-bucket-bytes=0) ;;
      bf16) opts=(--cluster.wire-precision='"bf16"') ;;
      fp16) opts=(--cluster.wire-precision='"fp16"') ;;
      topk) opts=(--cluster.gradient-compression='"topk"' --cluster.topk-ratio="$topk_ratio") ;;
      topk-mc) opts=(--cluster.gradient-compression='"topk"' --cluster.topk-ratio="$topk_ratio" --cluster.momentum-correction) ;;
      topk-both) opts=(--cluster.gradient-compression='"topk"' --cluster.value-compression='"topk"'
                       --cluster.topk-ratio="$topk_ratio") ;;
      *) echo "netem_cluster: unknown setting '$setting' (fp32, fp32-tls, fp32-onepush, bf16, fp16, topk, topk-mc, topk-both)" >&2; exit 2 ;;
    esac
    secure=()
    [[ $setting == fp32-tls ]] && secure=(--tls)
    name="$rate-$setting"
    if ! scripts/local-cluster.sh --ps 1 --workers 2 --name "$name" --run-dir "$tmp" "${where[@]}" "${secure[@]}" --deadline 900 -- --train.max-steps="$steps" --train.progress-every=100000 \
         --compute.device=cpu "${opts[@]}" "${extra[@]}" > "$tmp/$name.log" 2>&1; then
      echo "netem_cluster: the $setting run failed; its log:" >&2
      tail -n 20 "$tmp/$name.log" >&2
      exit 1
    fi
    s="$tmp/$name/summary.json"
    rate_of[$name]=$(field "$s" examples_per_second)
    bytes_of[$name]=$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['sent_bytes_per_step'] + d['received_bytes_per_step'])" "$s")
    acc_of[$name]=$(field "$s" final_test_accuracy)
    printf '  %-10s %9.0f examples/s  %10.0f tensor bytes/step (%8.0f pushed)  final test accuracy %.4f\n' \
      "$setting" "${rate_of[$name]}" "${bytes_of[$name]}" "$(field "$s" sent_bytes_per_step)" "${acc_of[$name]}"
    [[ -z "$results" ]] || echo "$rate $setting ${rate_of[$name]} ${bytes_of[$name]} $(field "$s" sent_bytes_per_step) ${acc_of[$name]}" >> "$results"
  done
  base="$rate-fp32"
  if [[ -n "${rate_of[$base]:-}" ]]; then
    for setting in $settings; do
      [[ $setting == fp32 ]] && continue
      name="$rate-$setting"
      /usr/bin/python3 - "$setting" "${rate_of[$name]}" "${rate_of[$base]}" "${bytes_of[$name]}" "${bytes_of[$base]}" \
        "${acc_of[$name]}" "${acc_of[$base]}" <<'PY'
import sys
s, r, r0, b, b0, a, a0 = sys.argv[1], *map(float, sys.argv[2:])
print(f"  {s} vs fp32: {r / r0:.2f}x examples/s, {b / b0:.3f}x bytes per step, accuracy {100 * (a - a0):+.2f} points")
PY
    done
  fi
  if [[ $rate != loopback && -n "${rate_of[loopback-fp32]:-}${rate_of[loopback-${settings%% *}]:-}" ]]; then
    for setting in $settings; do
      [[ -n "${rate_of[loopback-$setting]:-}" ]] || continue
      /usr/bin/python3 -c "import sys; print(f'  {sys.argv[1]} on {sys.argv[2]} vs 127.0.0.1: {float(sys.argv[3]) / float(sys.argv[4]):.2f}x examples/s')" \
        "$setting" "$rate" "${rate_of[$rate-$setting]}" "${rate_of[loopback-$setting]}"
    done
  fi
done
