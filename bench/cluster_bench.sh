#!/usr/bin/env bash
# The cluster benchmarks of the actor-cluster issue, measured side by side in one run:
#  1. a 1 MiB push + pull between two processes through the shard protocol, plain and TLS, vs a
#     raw TCP echo;
#  2. async cluster examples/s (1 shard, 2 workers, batch 50, one process per node), plain and
#     TLS, vs the single-process trainer, same model, same number of steps.
# Usage: bench/cluster_bench.sh [steps=4400]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-4400}
bin=build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

echo "== 1. transfer"
"$bin/actorps-bench-transfer" 3 2>/dev/null

echo "== 2. training throughput, $steps steps of batch 50, CPU backend"
"$bin/actorps-train" --train.max-steps="$steps" --train.run-dir="$tmp" --train.name=single \
  --train.progress-every=100000 --compute.device=cpu > /dev/null 2>&1
single=$(field "$tmp/single/summary.json" examples_per_second)
scripts/local-cluster.sh --ps 1 --workers 2 --name cluster --run-dir "$tmp" -- \
  --train.max-steps="$steps" --train.progress-every=100000 --compute.device=cpu > /dev/null 2>&1
cluster=$(field "$tmp/cluster/summary.json" examples_per_second)
scripts/local-cluster.sh --tls --ps 1 --workers 2 --name tls --run-dir "$tmp" -- \
  --train.max-steps="$steps" --train.progress-every=100000 --compute.device=cpu > /dev/null 2>&1
tls=$(field "$tmp/tls/summary.json" examples_per_second)
python3 - "$single" "$cluster" "$tls" <<'PY'
import sys
single, cluster, tls = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"single-process trainer           {single:10.0f} examples/s")
print(f"async cluster, 1 shard, 2 workers {cluster:9.0f} examples/s (4 processes on this machine)")
print(f"the same cluster over TLS        {tls:10.0f} examples/s")
print(f"cluster / single-process: {cluster / single:.2f}; TLS / plain cluster: {tls / cluster:.2f}")
print(f"cluster vs PyTorch RPC parameter server with 2 trainers (13000-15000 examples/s, from the issue): "
      f"{cluster / 15000:.2f}-{cluster / 13000:.2f}x (goal >= 2x)")
PY
