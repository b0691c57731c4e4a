#!/usr/bin/env bash
# In-graph against between-graph replication, measured side by side in one run: for 1, 2 and 3
# workers (2 shards, one process per node, the reference model on Fashion-MNIST, batch 50 per
# worker, so both average W x 50 examples per update), between-graph sync and in-graph sync
# train the same number of epochs; prints examples/s, test accuracy and the in-graph /
# between-graph ratio of examples/s per worker count, and the single-process trainer for scale.
# Usage: bench/in_graph.sh [epochs=2]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-2}
bin=build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
common=(--train.max-epochs="$epochs" --train.max-steps=0 --train.patience=0 --train.progress-every=1000000000
        --train.eval-every=0 --train.eval-every-epochs=0 --train.seed=7 --compute.device=cpu)

"$bin/actorps-train" "${common[@]}" --train.run-dir="$tmp" --train.name=single > "$tmp/single.out" 2>&1
printf '%-8s %-14s %12s %14s %8s\n' workers replication examples/s test-accuracy epochs
printf '%-8s %-14s %12.0f %14.4f %8.2f\n' 1 "single process" "$(field "$tmp/single/summary.json" examples_per_second)" \
  "$(field "$tmp/single/summary.json" test_accuracy)" "$(field "$tmp/single/summary.json" epochs)"
for w in 1 2 3; do
  for how in between-graph in-graph; do
    name=$how-$w
    scripts/local-cluster.sh --mode sync --ps 2 --workers "$w" --name "$name" --run-dir "$tmp" --bin "$bin" -- \
      "${common[@]}" --train.replication="\"$how\"" > "$tmp/$name.out" 2>&1 \
      || { echo "in_graph bench: $name failed; last lines:" >&2; tail -5 "$tmp/$name.out" >&2; exit 1; }
    printf '%-8s %-14s %12.0f %14.4f %8.2f\n' "$w" "$how" "$(field "$tmp/$name/summary.json" examples_per_second)" \
      "$(field "$tmp/$name/summary.json" test_accuracy)" "$(field "$tmp/$name/summary.json" epochs)"
  done
done
echo
for w in 1 2 3; do
  /usr/bin/python3 - "$w" "$tmp/in-graph-$w/summary.json" "$tmp/between-graph-$w/summary.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[2:])
print(f"{sys.argv[1]} worker(s): in-graph / between-graph examples/s = {a['examples_per_second'] / b['examples_per_second']:.2f}, "
      f"test accuracy {a['test_accuracy']:.4f} vs {b['test_accuracy']:.4f}")
PY
done
