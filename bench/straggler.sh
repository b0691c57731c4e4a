#!/usr/bin/env bash
# The straggler experiment of the sync issue: 3 workers, worker 2 slowed 3x (debug.slowdown),
# 1 shard, the same wall-clock budget per mode; prints steps/s and test accuracy per mode.
# Usage: bench/straggler.sh [seconds=30] [run-dir=runs/straggler]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
dir=${2:-runs/straggler}
mkdir -p "$dir"
common=(--train.max-seconds="$seconds" --train.max-epochs=0 --train.patience=0 --train.progress-every=100000
        --debug.slow-worker=2 --debug.slowdown=3.0 --compute.device=cpu)
run() { # run NAME MODE [options...]
  local name=$1 mode=$2
  shift 2
  scripts/local-cluster.sh --mode "$mode" --ps 1 --workers 3 --name "$name" --run-dir "$dir" -- \
    "${common[@]}" "$@" > "$dir/$name.out" 2>&1 || { echo "straggler: $name failed, see $dir/$name.out" >&2; exit 1; }
}
run sync-r3 sync
run sync-r2 sync --train.replicas-to-aggregate=2
run ssp-s2 ssp --train.staleness=2
run async async
python3 - "$dir" "$seconds" <<'PY'
import json, sys
d, seconds = sys.argv[1], sys.argv[2]
print(f"3 workers (worker 2 slowed 3x), 1 shard, {seconds} s of training each, batch 50, CPU")
print(f"| mode | global steps | steps/s | examples/s | test accuracy (best-validation model) | final model | stale dropped |")
print(f"|---|---|---|---|---|---|---|")
for name, label in (("sync-r3", "sync, R = 3"), ("sync-r2", "sync, R = 2 (1 backup)"),
                    ("ssp-s2", "ssp, s = 2"), ("async", "async")):
    s = json.load(open(f"{d}/{name}/summary.json"))
    gs = s["global_step"]
    print(f"| {label} | {gs} | {gs / s['train_seconds']:.0f} | {s['examples_per_second']:.0f} | "
          f"{100 * s['test_accuracy']:.2f}% | {100 * s['final_test_accuracy']:.2f}% | {s['stale_dropped']} |")
PY
