#!/usr/bin/env bash
# Towers (compute.devices), side by side in one run: an async cluster with 1 shard and 1 worker
# training 2 CPU towers of 1 thread each (batch 100: 50 per tower) against 1 shard and 2 workers
# of 1 thread (batch 50 each), the same examples, the cnn preset: examples/s and the tensor bytes
# pushed per example (goal: halved, at least the same examples/s) and each device's memory peak,
# ROUNDS interleaved rounds.
# Usage: bench/towers_bench.sh [ROUNDS=2] [EXAMPLES=40000] [PRESET=cnn]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
examples=${2:-40000}
preset=${3:-cnn}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
common=(--model.preset="\"$preset\"" --train.max-epochs=0 --train.eval-every-epochs=0 --train.patience=0
        --compute.device=cpu --compute.threads=1)
run() { # run NAME WORKERS BATCH LABEL [options]
  local name=$1 workers=$2 batch=$3 label=$4
  shift 4
  scripts/local-cluster.sh --ps 1 --workers "$workers" --name "$name" --run-dir "$tmp" -- "${common[@]}" \
    --train.batch-size="$batch" --train.max-steps=$((examples / batch)) "$@" > "$tmp/$name.log" 2>&1 \
    || { echo "towers_bench: $name failed"; tail -5 "$tmp/$name.log"; exit 1; }
  local s=$tmp/$name/summary.json
  python3 - "$label" "$s" "$batch" <<'PY'
import json, sys
label, path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(path))
peaks = ", ".join(f"{p / 2**20:.1f}" for w in s["worker_devices"] for p in w["memory_peak_bytes"])
print(f"  {label:28} {s['examples_per_second']:8.0f} examples/s  {s['sent_bytes_per_step'] / batch:8.0f} bytes pushed per example"
      f"  test accuracy {s['final_test_accuracy']}  memory peak per device (MiB) {peaks}")
PY
}
echo "== $preset, $examples examples per run, async, 1 shard"
for ((r = 1; r <= rounds; r++)); do
  run "towers-$r" 1 100 "round $r: 1 worker x 2 towers" '--compute.devices=["cpu:0", "cpu:1"]'
  run "workers-$r" 2 50 "round $r: 2 workers x 1 thread"
done
