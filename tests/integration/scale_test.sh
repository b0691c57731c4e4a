#!/usr/bin/env bash
# 16 worker processes and 2 shards on 127.0.0.1 (issue 32): async, sync with 2 backups (14 of 16
# aggregated) and ssp each stop at exactly train.max-steps, with the summary's steps and the
# shards' global step in agreement and every node exiting 0.
# Usage: scale_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
opts=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.max-epochs=0 --train.patience=0
      --cluster.report-every=5)

for row in "async 600" "sync 60 --train.replicas-to-aggregate=14" "ssp 600 --train.staleness=2"; do
  read -r mode steps extra <<<"$row"
  echo "== $mode: 16 workers, 2 shards, max-steps $steps"
  # shellcheck disable=SC2086
  cluster --mode "$mode" --ps 2 --workers 16 --name "$mode" --deadline 240 -- "${opts[@]}" --train.max-steps="$steps" \
    $extra > "$tmp/$mode.out" 2>&1 || { fail "$mode: the cluster failed:"; tail -20 "$tmp/$mode.out"; continue; }
  summary=$tmp/runs/$mode/summary.json
  s=$(field "$summary" steps)
  g=$(field "$summary" global_step)
  reg=$(grep -m1 "workers registered; training" "$tmp/runs/$mode/logs/chief.log")
  echo "steps $s, global step $g, worker steps $(field "$summary" worker_steps); $reg"
  [[ "$s" == "$steps" && "$g" == "$steps" ]] || fail "$mode: steps $s and global step $g, expected $steps"
done
finish
