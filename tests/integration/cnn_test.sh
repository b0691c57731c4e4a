#!/usr/bin/env bash
# Convolutional models in real clusters on 127.0.0.1:
#  1. CIFAR-10 binary files (written by the test: no real copy is reachable here), detected by
#     data.format = auto, normalised per channel and augmented, train a small CNN in an async
#     cluster (1 shard, 2 workers) far above chance (10 classes); the chief keeps the model, and
#     actorps-eval on it (with its recorded scaling) reproduces the summary's test accuracy;
#  2. the cnn preset trains on Fashion-MNIST in an async cluster; its summary records the layer
#     list and the chief prints the model table.
# Usage: cnn_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: CIFAR-10 format, small CNN, augmentation, async cluster"
python3 "$root/tests/integration/make_cifar.py" "$tmp/cifar" 200 200
layers='["conv 3x3x8 relu", "maxpool 2", "conv 3x3x16 relu", "maxpool 2", "dropout 0.25", "dense 10"]'
if cluster --ps 1 --workers 2 --name cifar --deadline 240 -- --data.dir="$tmp/cifar" --model.layers="$layers" \
     --data.normalize='"per-channel"' --data.augment='"crop"' --data.crop-padding=2 \
     --train.max-steps=300 --train.max-epochs=0 --train.patience=0 --train.learning-rate=0.02 \
     > "$tmp/cifar.out" 2>&1; then
  acc=$(field "$tmp/runs/cifar/summary.json" test_accuracy)
  echo "test accuracy $acc (chance 0.1), input $(field "$tmp/runs/cifar/summary.json" input)"
  above "$acc" 0.5 || fail "the CIFAR-format CNN reached only $acc"
  [[ "$(field "$tmp/runs/cifar/summary.json" input)" == "32x32x3" ]] || fail "the input shape is not 32x32x3"
  grep -q "(32x32x3) from $tmp/cifar" "$tmp/runs/cifar/logs/chief.log" || fail "the chief did not log the CIFAR data"
  # the cluster kept its model, with the per-channel scaling: actorps-eval reproduces the summary
  "$bin/actorps-eval" "$tmp/runs/cifar" --data.dir="$tmp/cifar" --set=test --out="$tmp/cifar-eval.json" \
    > "$tmp/cifar-eval.out" 2>&1 || { fail "actorps-eval of the cluster's model failed"; tail -3 "$tmp/cifar-eval.out"; }
  evaluated=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['test']['accuracy'])" "$tmp/cifar-eval.json")
  echo "actorps-eval of $tmp/runs/cifar/model/best: $evaluated"
  python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1e-4 else 1)" "$acc" "$evaluated" \
    || fail "actorps-eval ($evaluated) does not reproduce the cluster's test accuracy ($acc)"
else
  fail "the CIFAR cluster failed:"; tail -20 "$tmp/cifar.out"
fi

echo "== 2: the cnn preset on Fashion-MNIST, async cluster"
if cluster --ps 1 --workers 2 --name preset --deadline 300 -- --model.preset='"cnn"' --train.max-steps=200 \
     --train.max-epochs=0 --train.patience=0 > "$tmp/preset.out" 2>&1; then
  summary=$tmp/runs/preset/summary.json
  acc=$(field "$summary" test_accuracy)
  echo "test accuracy $acc, $(field "$summary" examples_per_second) examples/s, $(field "$summary" parameters) parameters"
  above "$acc" 0.4 || fail "the cnn preset reached only $acc after 200 steps (chance 0.1)"
  [[ "$(field "$summary" preset)" == "cnn" ]] || fail "summary.json does not name the preset"
  python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['layers']; sys.exit(0 if l[0]=='conv 3x3x32 relu' and len(l)==6 else 1)" \
    "$summary" || fail "summary.json does not record the layer list"
  grep -q "conv 3x3x64 relu  (conv1)" "$tmp/runs/preset/logs/chief.log" || fail "the chief did not print the model table"
else
  fail "the cnn preset cluster failed:"; tail -20 "$tmp/preset.out"
fi

finish
