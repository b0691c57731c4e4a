#!/usr/bin/env bash
# A user's own data, measured side by side in one run (issue 36):
#  1. the input pipeline on the cnn preset, a folder of 32x32 RGB JPEGs written from Fashion-MNIST
#     (N_TRAIN + 2,000 images, crop-flip augmentation): decoding at load on data.threads threads
#     (images/s), then training STEPS steps with the batches prepared inline (data.prefetch-batches
#     = 0) and by 1 pipeline thread 4 batches ahead: examples/s, and the share of the step time the
#     trainer waited for input (goal with 1 thread: < 2%);
#  2. the same seeded run of the reference MLP from Fashion-MNIST's IDX files and from the same
#     arrays in an .npz: final test loss (equal to the digit) and test accuracy;
#  3. the same from PNG class folders written from those images: test accuracy within noise.
# Usage: bench/input_bench.sh [STEPS=1500] [N_TRAIN=10000] [MLP_STEPS=5500] [IDX_DIR]   (after scripts/build.sh;
#        ACTORPS_DEVICE=gpu trains on the GPU, ACTORPS_BIN names another folder of binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-1500}
n_train=${2:-10000}
mlp_steps=${3:-5500}
data=${4:-/usr/share/datasets/fashion-mnist}
bin=${ACTORPS_BIN:-build/bin}
device=${ACTORPS_DEVICE:-cpu} # (gpu: train on the GPU)
py=${PYTHON:-/usr/bin/python3} # (numpy and PIL)
make=tests/integration/make_user_data.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
loaded() { grep -o 'from .* in [0-9.e-]* s' "$1" | awk '{print $(NF-1)}'; }

echo "== 1. the input pipeline: cnn on 32x32 RGB JPEGs, $steps steps of batch 50"
"$py" "$make" folder "$data" "$tmp/jpg" jpg "$n_train" 2000 32
images=$((n_train + 2000))
common=(--model.preset='"cnn"' --data.dir="\"$tmp/jpg\"" --data.augment='"crop-flip"' --train.max-steps="$steps"
        --train.max-epochs=0 --train.eval-every-epochs=0 --train.patience=0 --train.progress-every=100
        --compute.device="$device" --train.run-dir="\"$tmp/runs\"")
for threads in 1 2; do
  "$bin/actorps-train" "${common[@]}" --data.threads="$threads" --train.max-steps=1 --train.name="\"load-$threads\"" \
    > "$tmp/load-$threads.log" 2>&1
  s=$(loaded "$tmp/load-$threads.log")
  python3 -c "import sys; print(f'  decoding {sys.argv[1]} JPEGs at load, {sys.argv[3]} thread(s): {float(sys.argv[2]):.2f} s, {int(sys.argv[1]) / float(sys.argv[2]):.0f} images/s')" "$images" "$s" "$threads"
done
for round in 1 2; do
  for prefetch in 0 4; do
    name="p$prefetch-r$round"
    "$bin/actorps-train" "${common[@]}" --data.threads=1 --data.prefetch-batches="$prefetch" --train.name="\"$name\"" \
      > "$tmp/$name.log" 2>&1
    s=$tmp/runs/$name/summary.json
    python3 -c "import sys; print(f'  round {sys.argv[1]}, prefetch {sys.argv[2]}: {float(sys.argv[3]):8.0f} examples/s, waited for input {100 * float(sys.argv[4]) / float(sys.argv[5]):.2f}% of the training time')" \
      "$round" "$prefetch" "$(field "$s" examples_per_second)" "$(field "$s" input_wait_seconds)" "$(field "$s" train_seconds)"
  done
done

echo "== 2. the same seeded run from IDX and from .npz (reference MLP, $mlp_steps steps)"
"$py" "$make" npz "$data" "$tmp/fm.npz"
mlp=(--train.max-steps="$mlp_steps" --train.max-epochs=0 --train.patience=0 --compute.device="$device" --train.run-dir="\"$tmp/runs\"")
"$bin/actorps-train" "${mlp[@]}" --data.dir="\"$data\"" --train.name='"idx"' > "$tmp/idx.log" 2>&1
"$bin/actorps-train" "${mlp[@]}" --data.dir="\"$tmp/fm.npz\"" --train.name='"npz"' > "$tmp/npz.log" 2>&1
echo "== 3. the same from PNG class folders (every image)"
"$py" "$make" folder "$data" "$tmp/png" png
"$bin/actorps-train" "${mlp[@]}" --data.dir="\"$tmp/png\"" --data.threads=2 --train.name='"png"' > "$tmp/png.log" 2>&1
for run in idx npz png; do
  s=$tmp/runs/$run/summary.json
  printf '  %-4s final test loss %s, test accuracy %s (loaded in %s s)\n' "$run" "$(field "$s" final_test_loss)" \
    "$(field "$s" final_test_accuracy)" "$(loaded "$tmp/$run.log")"
done
