#!/usr/bin/env bash
# Integration: synchronous training with real processes on 127.0.0.1.
#  1. a sync cluster (chief, 2 shards, 2 workers) on Fashion-MNIST converges;
#  2. seeded sync runs (replicas_to_aggregate = all) end with bit-identical weights, also when
#     workers push each layer's gradients as backprop completes them (cluster.push-bucket-bytes);
#  3. killing one worker of three mid-run (kill -9) does not stop training, and the worker,
#     restarted, rejoins.
# Usage: sync_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: sync on Fashion-MNIST, 2 shards x 2 workers, 300 global steps"
if cluster --mode sync --ps 2 --workers 2 --name fashion --deadline 300 -- --train.max-steps=300 \
     > "$tmp/fashion.out" 2>&1; then
  acc=$(field "$tmp/runs/fashion/summary.json" test_accuracy)
  echo "test accuracy $acc, global step $(field "$tmp/runs/fashion/summary.json" global_step)"
  above "$acc" 0.7 || fail "accuracy $acc is not > 0.7"
else
  fail "the sync cluster failed:"; tail -20 "$tmp/fashion.out"
fi

echo "== 2: seeded sync runs give identical weights, however the pushes are cut"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
small=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.1 --train.seed=7)
# a and b: the default (the small model fits one part); c: one push per shard after backprop;
# d: every variable its own part, pushed as backprop completes it (wait-free backprop)
declare -A bucket=([a]=262144 [b]=262144 [c]=0 [d]=1)
for run in a b c d; do
  cluster --mode sync --ps 2 --workers 3 --name "det-$run" --deadline 120 -- "${small[@]}" \
    --train.max-steps=150 --train.max-epochs=0 --train.patience=0 --cluster.push-bucket-bytes="${bucket[$run]}" \
    > "$tmp/det-$run.out" 2>&1 || { fail "deterministic run $run failed"; tail -20 "$tmp/det-$run.out"; }
done
same_weights det-a det-b "two seeded sync runs"
same_weights det-a det-c "a run pushing once after backprop"
same_weights det-a det-d "a run pushing each variable as backprop completes it"

echo "== 3: kill -9 one worker of three mid-run, then restart it"
killopts=("${small[@]}" --train.max-seconds=8.0 --train.max-epochs=0 --train.patience=0 --cluster.report-every=10)
cluster --mode sync --ps 1 --workers 3 --name kill --deadline 180 --tolerate worker-2 -- "${killopts[@]}" \
  > "$tmp/kill.out" 2>&1 &
cpid=$!
restart_killed_worker kill 2 "$tmp/restarted.log" "${killopts[@]}"
wait "$cpid"; rc=$?
if [[ -n "$restarted" ]]; then
  wait "$restarted"; rrc=$?
  [[ $rrc -eq 0 ]] || { fail "the restarted worker exited $rrc"; tail -5 "$tmp/restarted.log"; }
  grep -q "worker 2 at .* rejoined" "$tmp/runs/kill/logs/chief.log" || fail "the chief did not log the rejoin"
  grep -q "stopped at step" "$tmp/restarted.log" || fail "the restarted worker did not train"
  echo "restarted worker: $(grep -o 'stopped at step.*' "$tmp/restarted.log")"
fi
if [[ $rc -eq 0 ]]; then
  steps=$(field "$tmp/runs/kill/summary.json" steps)
  lost=$(field "$tmp/runs/kill/summary.json" workers_lost)
  echo "finished: $steps worker steps, workers lost: $lost"
  [[ "$lost" == "1" ]] || fail "the chief did not count the lost worker"
  grep -q "training goes on with 2 worker(s)" "$tmp/runs/kill/logs/chief.log" || fail "the chief did not log going on"
  grep -q "no longer waits for worker 2" "$tmp/runs/kill/logs/ps-0.log" || fail "the aggregator did not log releasing worker 2"
else
  fail "training stopped after the kill (exit $rc)"; tail -20 "$tmp/kill.out"
fi

finish
