#!/usr/bin/env bash
# scripts/exercise10.sh end to end on a small synthetic data set with a 1-second budget, then with
# --notebook (early stopping every 5 epochs, patience 6, at most 40 epochs): every
# mode runs, report.md has a row per mode (none failed), the answers and the epoch table,
# accuracy.png is a PNG image, and the 1-epoch runs with 1, 2 and 3 workers train exactly 1 epoch.
# Usage: exercise10_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
if "$root/scripts/exercise10.sh" --budget 1 --epochs 1 --target 0.9 --name smoke --run-dir "$tmp/runs" --bin "$bin" -- \
     --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.03 > "$tmp/ex.out" 2>&1; then
  report=$tmp/runs/smoke/report.md
  for mode in single async sync sync-backup in-graph ssp model-parallel; do
    grep -q "^| $mode | " "$report" || fail "no row for $mode"
  done
  grep -q "| failed |" "$report" && fail "a mode failed: $(grep '| failed |' "$report")"
  answers=$(grep -c '^- \*\*' "$report")
  [[ $answers -eq 6 ]] || fail "expected 6 answers, found $answers"
  [[ $(grep -c '^| [123] | ' "$report") -eq 3 ]] || fail "the 1/2/3-worker table is incomplete"
  [[ "$(head -c 8 "$tmp/runs/smoke/accuracy.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] \
    || fail "accuracy.png is not a PNG"
  echo "report: $(grep -c '^|' "$report") table lines, $answers answers"
  # issue 50, item 6: "1 epoch" with 1, 2 and 3 workers is exactly one pass over each partition
  # (it was 55,033 examples in 401/350/350 steps by worker on Fashion-MNIST)
  for w in 1 2 3; do
    epochs=$(field "$tmp/runs/smoke/epochs-$w/summary.json" epochs)
    steps=$(grep -ho "stopped at step [0-9]*" "$tmp/runs/smoke/epochs-$w/logs/"worker-*.log | awk '{print $4}' | sort -u | tr '\n' ' ')
    echo "1 epoch with $w workers: $epochs epochs; steps by worker: $steps"
    [[ "$epochs" == 1 ]] || fail "1 epoch with $w workers trained $epochs epochs"
    [[ $(wc -w <<< "$steps") -eq 1 ]] || fail "the $w workers took different steps for their equal partitions: $steps"
  done
else
  fail "exercise10.sh failed:"; tail -20 "$tmp/ex.out"
fi
echo "== the notebook's settings (--notebook): early stopping, no budget"
if "$root/scripts/exercise10.sh" --notebook --max-epochs 40 --epochs 1 --target 0.9 --name notebook --run-dir "$tmp/runs" \
     --bin "$bin" -- --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.03 > "$tmp/nb.out" 2>&1; then
  report=$tmp/runs/notebook/report.md
  grep -q "as the exercise-10 notebook did" "$report" || fail "notebook: the report does not name its settings"
  grep -q "^Why each run stopped: " "$report" || fail "notebook: no stop reasons in the report"
  grep -q "| failed |" "$report" && fail "notebook: a mode failed: $(grep '| failed |' "$report")"
  for mode in single async sync sync-backup in-graph ssp model-parallel; do
    grep -q "^| $mode | " "$report" || fail "notebook: no row for $mode"
    reason=$(field "$tmp/runs/notebook/$mode/summary.json" stop_reason)
    [[ "$reason" == "early stopping: no lower validation loss in 6 evaluations" || "$reason" == "max epochs 40 reached" ]] \
      || fail "notebook: $mode stopped for '$reason'"
  done
  # evaluations every 5 epochs (the last row may be the final model's)
  python3 - "$tmp/runs/notebook/single/metrics.jsonl" <<'PY' || fail "notebook: the single run did not evaluate every 5 epochs"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
epochs = [round(r["epoch"], 6) for r in rows[:-1]]
sys.exit(0 if epochs and all(e % 5 == 0 for e in epochs) else 1)
PY
  echo "notebook: $(grep -c '^|' "$report") table lines; $(grep '^Why each run stopped' "$report" | cut -c1-160)..."
else
  fail "exercise10.sh --notebook failed:"; tail -20 "$tmp/nb.out"
fi
finish
