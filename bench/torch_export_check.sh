#!/usr/bin/env bash
# Outside CI: an exported model in PyTorch reproduces actorps' test accuracy.
# Usage: bench/torch_export_check.sh [MODEL.npz [DATA_DIR]]
#   Without MODEL: trains the reference MLP (2 epochs), the cnn preset (1,500 steps), a residual
#   network with batch normalisation, an Xception-like one of separable and depthwise
#   convolutions, and the cnn on TF's distortions (24x24 crops, standardised: the central crop and
#   the standardisation in model.json; 1,000 steps each) with actorps-train, exports each, and
#   checks them. Run from the repository root after a build.
set -euo pipefail
data=${2:-/usr/share/datasets/fashion-mnist}
bin=build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/install_torch.sh torch_export_check

check() { # NPZ: actorps-eval's and PyTorch's test accuracy side by side
  "$bin/actorps-eval" "$1" --data.dir="$data" --set=test --out="$tmp/eval.json" > /dev/null
  ours=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['test']['accuracy'])" "$tmp/eval.json")
  line=$(/usr/bin/python3 bench/torch_from_npz.py "$1" "$data")
  theirs=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['torch_test_accuracy'])" "$line")
  python3 - "$ours" "$theirs" "$line" <<'PY'
import json, sys
ours, theirs, line = float(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
ok = abs(ours - theirs) <= 1e-4
print(f"{line['model']}\n  actorps-eval {ours:.4f}, PyTorch from the npz {theirs:.4f}: "
      f"{'equal' if ok else 'DIFFERENT'} (|diff| {abs(ours - theirs):.4f}, {line['examples']} test examples)")
sys.exit(0 if ok else 1)
PY
}

if [[ $# -ge 1 ]]; then
  check "$1"
  exit
fi
status=0
train_check() { # NAME OPTIONS...: train, export, check
  local name=$1
  shift
  "$bin/actorps-train" "$@" --train.patience=0 --train.run-dir="$tmp/runs" --train.name="$name" --data.dir="$data" \
    > "$tmp/$name.log" 2>&1 || { echo "torch_export_check: training $name failed"; tail -3 "$tmp/$name.log"; return 1; }
  "$bin/actorps-export" "$tmp/runs/$name" "$tmp/$name.npz" > /dev/null
  check "$tmp/$name.npz"
}
train_check reference --model.preset=reference --train.max-epochs=2 || status=1
train_check cnn --model.preset=cnn --train.max-steps=1500 --train.max-epochs=0 || status=1
train_check residual --model.layers='["conv 3x3x8 stride 2", "batchnorm relu", "residual [conv 3x3x8, batchnorm relu, conv 3x3x8, batchnorm] relu", "residual [conv 3x3x16 stride 2, batchnorm relu, conv 3x3x16, batchnorm] relu", "avgpool global", "dense 10"]' \
  --train.learning-rate=0.05 --train.max-steps=1000 --train.max-epochs=0 || status=1
train_check separable --model.layers='["conv 3x3x8 stride 2", "batchnorm relu", "residual [separable 3x3x16, batchnorm relu, separable 3x3x16, batchnorm, maxpool 3 stride 2 same] relu", "depthwise 3x3 relu", "avgpool global", "dense 10"]' \
  --train.learning-rate=0.05 --train.max-steps=1000 --train.max-epochs=0 || status=1
train_check distorted --model.preset=cnn --data.crop-size=24 --data.augment=flip --data.brightness=0.2 \
  --data.contrast=0.5,1.5 --data.standardize=per-image --train.max-steps=1000 --train.max-epochs=0 || status=1
exit $status
