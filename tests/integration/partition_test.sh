#!/usr/bin/env bash
# Partitioned variables (cluster.partitioner) in real multi-process clusters on 127.0.0.1:
#  1. the reference model on 2 shards, fixed:2: the chief's placement table lists every part and
#     the shards hold bytes within 10% of each other; training converges on Fashion-MNIST;
#  2. two seeded sync runs, whole and in parts (fixed:2), end with the same weights;
#  3. checkpoints hold whole variables: a run with max-bytes parts resumes from its checkpoint,
#     actorps-eval reproduces its final model, and a run with another partitioner is refused by name;
#  4. model parallelism with partitioned variables trains.
# Usage: partition_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: reference model, 2 shards, fixed:2, async on Fashion-MNIST"
if cluster --ps 2 --workers 2 --name ref --deadline 300 -- --cluster.partitioner='"fixed:2"' --train.max-steps=300 \
     > "$tmp/ref.out" 2>&1; then
  log=$tmp/runs/ref/logs/chief.log
  grep -q "dense0/weights/part_1    392x160        250880  1" "$log" || fail "the table does not list dense0's second part"
  bytes=$(grep -o 'bytes per shard: .*' "$log" | head -1)
  echo "$bytes"
  python3 -c "import sys; a,b=[int(x.split('=')[1]) for x in sys.argv[1].split(': ')[1].split()]; print('imbalance', abs(a-b)/max(a,b)); sys.exit(0 if abs(a-b) <= 0.1*max(a,b) else 1)" \
    "$bytes" || fail "bytes per shard differ by more than 10%: $bytes"
  acc=$(field "$tmp/runs/ref/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.7 || fail "accuracy $acc is not > 0.7"
else
  fail "the partitioned cluster failed:"; tail -20 "$tmp/ref.out"
fi

echo "== 2: seeded sync runs, whole and partitioned, give the same weights"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
small=(--data.dir="$tmp/data" --model.hidden=[16,12] --model.classes=4 --train.learning-rate=0.1 --train.seed=7
       --train.max-epochs=0 --train.patience=0)
for split in none fixed:2; do
  cluster --mode sync --ps 2 --workers 2 --name "sync-${split/:/}" --deadline 120 -- "${small[@]}" \
    --cluster.partitioner="\"$split\"" --train.max-steps=150 > "$tmp/sync-$split.out" 2>&1 \
    || { fail "the sync run with partitioner $split failed"; tail -20 "$tmp/sync-$split.out"; }
done
same_weights sync-none sync-fixed2 "whole and partitioned variables"

echo "== 3: checkpoints of partitioned variables"
ck=$tmp/ckpts
copts=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.03 --train.max-epochs=0
       --train.patience=0 --cluster.partitioner='"max-bytes:128"' --checkpoint.dir="$ck" --checkpoint.every-steps=100)
cluster --ps 2 --workers 2 --name first --deadline 120 -- "${copts[@]}" --train.max-steps=500 > "$tmp/first.out" 2>&1 \
  || { fail "the first checkpointed run failed:"; tail -20 "$tmp/first.out"; }
grep -q "dense0/weights/part_1" "$tmp/runs/first/logs/chief.log" || fail "max-bytes:128 did not split dense0/weights"
steps=$(field "$tmp/runs/first/summary.json" steps)
"$bin/actorps-eval" "$tmp/runs/first/model/final" --data.dir="$tmp/data" --set=test --out="$tmp/first-eval.json" > "$tmp/eval.out" 2>&1 \
  || { fail "actorps-eval of the partitioned run's model failed"; tail -3 "$tmp/eval.out"; }
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['final_test_accuracy']; b=json.load(open(sys.argv[2]))['test']['accuracy']; print('final model: summary', a, 'actorps-eval', b); sys.exit(0 if abs(a-b) <= 1e-4 else 1)" \
  "$tmp/runs/first/summary.json" "$tmp/first-eval.json" || fail "actorps-eval does not reproduce the final model's accuracy"
cluster --ps 2 --workers 2 --name second --deadline 120 -- "${copts[@]}" --train.max-steps=900 > "$tmp/second.out" 2>&1 \
  || { fail "the resumed run failed:"; tail -20 "$tmp/second.out"; }
resumed=$(field "$tmp/runs/second/summary.json" resumed_from_step)
acc=$(field "$tmp/runs/second/summary.json" test_accuracy)
echo "resumed from step $resumed of $steps; test accuracy $acc"
[[ "$resumed" == "$steps" ]] || fail "resumed from $resumed, expected $steps"
above "$acc" 0.6 || fail "accuracy after resuming: $acc"
cluster --ps 2 --workers 2 --name other --deadline 60 -- "${copts[@]}" --cluster.partitioner='"fixed:2"' \
  --train.max-steps=1000 > "$tmp/other.out" 2>&1 && fail "a checkpoint of another partitioning was accepted"
grep -q "partitioner max-bytes:128) differently from this run (2 shards, placement round-robin, partitioner fixed:2)" \
  "$tmp/other.out" || { fail "the other partitioning was not named:"; tail -5 "$tmp/other.out"; }
echo "$(grep -o 'the checkpoint .* differently[^:]*' "$tmp/other.out" | head -1)"

echo "== 4: model parallelism with partitioned variables"
cluster --mode model-parallel --ps 2 --workers 2 --name mp --deadline 120 -- "${small[@]}" --train.slices=2 \
  --cluster.partitioner='"fixed:3"' --train.max-steps=300 > "$tmp/mp.out" 2>&1 \
  || { fail "model parallelism with partitions failed:"; tail -20 "$tmp/mp.out"; }
acc=$(field "$tmp/runs/mp/summary.json" test_accuracy 2>/dev/null)
echo "model-parallel, fixed:3: test accuracy $acc"
above "${acc:-0}" 0.6 || fail "model-parallel accuracy $acc is not > 0.6"

finish
