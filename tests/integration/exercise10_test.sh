#!/usr/bin/env bash
# scripts/exercise10.sh end to end on a small synthetic data set with a 2-second budget: every
# mode runs, report.md has a row per mode (none failed), the answers and the epoch table, and
# accuracy.png is a PNG image.
# Usage: exercise10_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
if "$root/scripts/exercise10.sh" --budget 2 --epochs 1 --target 0.9 --name smoke --run-dir "$tmp/runs" --bin "$bin" -- \
     --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.03 > "$tmp/ex.out" 2>&1; then
  report=$tmp/runs/smoke/report.md
  for mode in single async sync sync-backup ssp model-parallel; do
    grep -q "^| $mode | " "$report" || fail "no row for $mode"
  done
  grep -q "| failed |" "$report" && fail "a mode failed: $(grep '| failed |' "$report")"
  answers=$(grep -c '^- \*\*' "$report")
  [[ $answers -eq 5 ]] || fail "expected 5 answers, found $answers"
  [[ $(grep -c '^| [123] | ' "$report") -eq 3 ]] || fail "the 1/2/3-worker table is incomplete"
  [[ "$(head -c 8 "$tmp/runs/smoke/accuracy.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] \
    || fail "accuracy.png is not a PNG"
  echo "report: $(grep -c '^|' "$report") table lines, $answers answers"
else
  fail "exercise10.sh failed:"; tail -20 "$tmp/ex.out"
fi
finish
