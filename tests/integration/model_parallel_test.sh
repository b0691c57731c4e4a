#!/usr/bin/env bash
# Model parallelism (train.mode = model-parallel) as real multi-process clusters on 127.0.0.1:
#  1. K = 2 slices over 2 shards train on Fashion-MNIST; the slices log their columns' group; the
#     chief keeps the whole model (actorps-eval reproduces the final model's test accuracy);
#  2. one replica split into K = 2 and K = 3 slices follows the same training (the split changes
#     only rounding): both stop by themselves at exactly train.max-steps, and the final model's
#     test accuracy and loss agree (the best-validation model is a snapshot taken while slices
#     push, so it is not compared);
#  3. data and model parallelism together: 2 groups of 2 slices;
#  4. bad splits are refused, naming the key or the layer (a conv model names its first conv layer).
# Usage: model_parallel_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

# trains NAME MIN_ACC WORKER PATTERN [local-cluster.sh options]: the cluster run NAME succeeds,
# its test accuracy is above MIN_ACC and worker WORKER's log has PATTERN (its place in a group)
trains() {
  local name=$1 min=$2 worker=$3 pattern=$4
  shift 4
  if cluster --name "$name" "$@" > "$tmp/$name.out" 2>&1; then
    local summary=$tmp/runs/$name/summary.json acc
    acc=$(field "$summary" test_accuracy)
    echo "test accuracy $acc, global step $(field "$summary" global_step), examples/s $(field "$summary" examples_per_second)"
    above "$acc" "$min" || fail "$name: accuracy $acc is not > $min"
    grep -q "$pattern" "$tmp/runs/$name/logs/worker-$worker.log" || fail "$name: worker $worker did not log '$pattern'"
  else
    fail "the $name cluster failed:"; tail -20 "$tmp/$name.out"
  fi
}

echo "== 1: Fashion-MNIST, 2 shards, 1 group of 2 slices, 400 steps"
trains fashion 0.7 1 "slice 1 of group 0" --mode model-parallel --ps 2 --workers 2 --deadline 300 -- --train.slices=2 \
  --train.max-steps=400
# the chief kept the whole (unsplit) model: actorps-eval reproduces the final model's accuracy
"$bin/actorps-eval" "$tmp/runs/fashion/model/final" --set=test --out="$tmp/fashion-eval.json" > "$tmp/eval.out" 2>&1 \
  || { fail "actorps-eval of the model-parallel run's model failed"; tail -3 "$tmp/eval.out"; }
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['final_test_accuracy']; b=json.load(open(sys.argv[2]))['test']['accuracy']; print('final model: summary', a, 'actorps-eval', b); sys.exit(0 if abs(a-b) <= 1e-4 else 1)" \
  "$tmp/runs/fashion/summary.json" "$tmp/fashion-eval.json" || fail "actorps-eval does not reproduce the final model's accuracy"

echo "== 2: one replica, K = 2 and K = 3, same seed and data"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
small=(--data.dir="$tmp/data" --model.hidden=[16,12] --model.classes=4 --train.learning-rate=0.03 --train.seed=3
       --train.max-steps=300 --train.max-epochs=0 --train.patience=0)
for k in 2 3; do
  cluster --mode model-parallel --workers "$k" --name "k$k" --deadline 120 -- "${small[@]}" --train.slices="$k" \
    > "$tmp/k$k.out" 2>&1 || { fail "K=$k failed:"; tail -20 "$tmp/k$k.out"; }
done
read -r acc2 loss2 <<< "$(field "$tmp/runs/k2/summary.json" final_test_accuracy) $(field "$tmp/runs/k2/summary.json" final_test_loss)"
read -r acc3 loss3 <<< "$(field "$tmp/runs/k3/summary.json" final_test_accuracy) $(field "$tmp/runs/k3/summary.json" final_test_loss)"
echo "K=2: accuracy $acc2 loss $loss2; K=3: accuracy $acc3 loss $loss3"
for k in 2 3; do
  steps=$(field "$tmp/runs/k$k/summary.json" global_step)
  [[ "$steps" == 300 ]] || fail "K=$k stopped at global step $steps, not at train.max-steps = 300"
done
python3 -c "import sys; a2,l2,a3,l3=map(float,sys.argv[1:]); sys.exit(0 if abs(a2-a3)<=0.005+1e-9 and abs(l2-l3)<=1e-3*l2 and a2>0.6 else 1)" \
  "$acc2" "$loss2" "$acc3" "$loss3" || fail "K=2 and K=3 trained differently"

echo "== 3: 2 groups of 2 slices (data and model parallelism)"
trains groups 0.6 3 "slice 1 of group 1" --mode model-parallel --ps 2 --workers 4 --deadline 120 -- "${small[@]}" \
  --train.slices=2

echo "== 4: bad splits"
out=$("$bin/actorps-node" --node.role=local --train.mode=model-parallel --train.slices=3 2>&1); rc=$?
echo "exit $rc: ${out##*error: }"
[[ $rc -eq 2 && "$out" == *"train.slices"*"divide the 2 workers"* ]] || fail "slices not dividing the workers: exit $rc: $out"
workers='["127.0.0.1:1","127.0.0.1:2","127.0.0.1:3","127.0.0.1:4","127.0.0.1:5","127.0.0.1:6","127.0.0.1:7","127.0.0.1:8","127.0.0.1:9","127.0.0.1:10","127.0.0.1:11"]'
out=$("$bin/actorps-node" --node.role=local --train.mode=model-parallel --train.slices=11 --cluster.workers="$workers" \
        --train.run-dir="$tmp/runs" 2>&1); rc=$?
echo "exit $rc: $(grep -o 'layer 5 has only.*' <<< "$out" | head -1)"
[[ $rc -ne 0 && "$out" == *"layer 5 has only 10 units"* ]] || fail "11 slices of 10 logits: exit $rc: $out"
out=$("$bin/actorps-node" --node.role=local --train.mode=model-parallel --train.slices=2 --model.preset='"cnn"' 2>&1); rc=$?
echo "exit $rc: ${out##*error: }"
[[ $rc -eq 2 && "$out" == *"splits dense layers only; layer 0 (conv 3x3x32 relu) is a conv layer"* ]] \
  || fail "a conv model in model-parallel mode: exit $rc: $out"

finish
