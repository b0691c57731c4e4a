#!/usr/bin/env bash
# Installs what is missing, builds, and trains the reference model on Fashion-MNIST with a local
# multi-process cluster -- 1 chief, 2 parameter shards, 2 workers, asynchronous updates -- then
# prints the run's summary, then evaluates the model the run kept and classifies a few test
# images with it. The learning rate drops 10x after 11,000 global steps (10 epochs: TF's
# staircase decay; decaying continuously, the async cluster learned little in its last epochs
# and ended 1.2 points lower); async mode divides it by the worker count and compensates the
# momentum (docs/results.md).
# Extra arguments go to every node, e.g. scripts/demo.sh --train.max-epochs=5.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
name=demo-$(date +%Y%m%d-%H%M%S)
echo "demo: async cluster (2 shards, 2 workers) training 784 -> 5x160 ELU -> 10 on Fashion-MNIST"
scripts/local-cluster.sh --mode async --ps 2 --workers 2 --name "$name" -- \
  --train.max-epochs=15 --train.lr-decay-rate=0.1 --train.lr-decay-steps=11000 --train.lr-staircase=true \
  --train.progress-every=2200 "$@"
echo "demo: the run kept its model; actorps-eval scores it, actorps-predict classifies the first test images"
build/bin/actorps-eval "runs/$name" --set=test --out="runs/$name/eval.json" --plot
build/bin/actorps-predict "runs/$name" /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz --top=2 \
  > "runs/$name/predictions.txt"
head -4 "runs/$name/predictions.txt"
echo "demo: more in docs/export.md (NumPy, PyTorch, PNG images, init-from)"
