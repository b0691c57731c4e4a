#!/usr/bin/env bash
# Integration: TF's input distortions (data.crop-size, data.brightness, data.contrast,
# data.standardize) from training to the model tools, on small 4x4 data (4 classes: quadrants):
#  1. a single process trains on random 3x3 windows with brightness, contrast and per-image
#     standardisation and beats chance (25%) by a wide margin; its log names every distortion;
#  2. actorps-eval on its model (4x4 images: the central 3x3, standardised) gives summary.json's
#     test accuracy, actorps-predict takes the 4x4 images, and 3x3 images are refused by name;
#  3. the export's model.json records crop, source and standardisation, and the checkpoint it came
#     from reads by docs/checkpoint_format.md alone with the same values;
#  4. a seeded sync cluster (1 shard x 2 workers) with the distortions gives the same weights twice;
#  5. a crop larger than the images (the cifar10-tutorial preset's 24 on 4x4) is a named error with
#     exit 2 and no run folder.
# Usage: distortions_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
distort=(--data.crop-size=3 --data.brightness=0.2 --data.contrast=0.5,1.5 --data.standardize=per-image)
common=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --compute.device=cpu --train.max-epochs=0
        --train.patience=0 "${distort[@]}")

echo "== 1. a single process on distorted 3x3 windows"
if "$bin/actorps-train" "${common[@]}" --train.max-steps=600 --train.run-dir="$tmp/runs" --train.name=single \
     > "$tmp/single.log" 2>&1; then
  acc=$(field "$tmp/runs/single/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.8 || fail "test accuracy $acc"
  grep "distorted (" "$tmp/single.log"
  grep -q "distorted (crop 3x3, brightness 0.2, contrast \[0.5, 1.5\], per-image standardisation)" "$tmp/single.log" \
    || fail "the log does not name the distortions"
  grep -qE "input +3x3x1" "$tmp/single.log" || fail "the model's input is not the 3x3 window"
else
  fail "training failed:"; tail -5 "$tmp/single.log"
fi

echo "== 2. actorps-eval and actorps-predict crop and standardise as training evaluated"
out=$("$bin/actorps-eval" "$tmp/runs/single/model/best" --data.dir="$tmp/data" --out="$tmp/eval.json" 2>&1); rc=$?
want=$(python3 -c "import json,sys; print(f'{100 * json.load(open(sys.argv[1]))[\"test_accuracy\"]:.2f}%')" "$tmp/runs/single/summary.json")
got=$(grep "^test set:" <<< "$out")
echo "actorps-eval: $got (summary.json: $want)"
[[ $rc -eq 0 && "$got" == *"accuracy $want" ]] || fail "actorps-eval: exit $rc, want accuracy $want: $out"
out=$("$bin/actorps-predict" "$tmp/runs/single/model/best" "$tmp/data/t10k-images-idx3-ubyte.gz" --output=jsonl 2>&1); rc=$?
lines=$(grep -c '"class"' <<< "$out")
echo "actorps-predict: exit $rc, $lines predictions"
[[ $rc -eq 0 && "$lines" == 200 ]] || fail "actorps-predict on the 4x4 test images: exit $rc: $(tail -2 <<< "$out")"
"$py" - "$tmp/data" "$tmp/small.idx" <<'PY'
import gzip, struct, sys
raw = gzip.open(sys.argv[1] + "/t10k-images-idx3-ubyte.gz").read()[16:16 + 3 * 16]
px = bytes(raw[i * 16 + y * 4 + x] for i in range(3) for y in range(3) for x in range(3))
open(sys.argv[2], "wb").write(struct.pack(">HBBIII", 0, 8, 3, 3, 3, 3) + px)
PY
out=$("$bin/actorps-predict" "$tmp/runs/single/model/best" "$tmp/small.idx" 2>&1); rc=$?
echo "3x3 images: exit $rc: $out"
[[ $rc -ne 0 && "$out" == *"small.idx: images are 3x3x1, the model takes 4x4x1"* ]] \
  || fail "3x3 images were not refused by name"

echo "== 3. the export and the checkpoint record the crop and the standardisation"
"$bin/actorps-export" "$tmp/runs/single/model/best" "$tmp/m.npz" > "$tmp/export.out" 2>&1 || fail "export failed: $(cat "$tmp/export.out")"
"$py" - "$tmp/m.npz" <<'PY' || fail "model.json's scaling is wrong"
import json, sys
import numpy as np
s = json.loads(str(np.load(sys.argv[1])["model.json"]))["scaling"]
print("model.json scaling:", s)
sys.exit(0 if s["crop"] == 3 and s["source"] == [4, 4] and s["standardize"] is True else 1)
PY
"$py" - "$root/tests/integration" "$tmp/runs/single/model/best" <<'PY' || fail "the manifest's input fields are wrong"
import sys
sys.path.insert(0, sys.argv[1])
from read_checkpoint import read_manifest
m = read_manifest(sys.argv[2])
fields = [m[k] for k in ("format", "input_crop", "input_source_height", "input_source_width", "input_standardize")]
print("manifest: format, crop, source, standardize:", fields)
sys.exit(0 if fields == [7, 3, 4, 4, True] else 1)
PY
"$py" "$root/tests/integration/read_checkpoint.py" "$tmp/runs/single/model/best" "$tmp/m.npz" > /dev/null \
  || fail "the npz differs from the checkpoint"

echo "== 4. a seeded sync cluster with the distortions, twice"
sync_twice 0.6 "${common[@]}" --train.max-steps=300 --train.seed=3

echo "== 5. a crop larger than the images"
out=$("$bin/actorps-train" --data.dir="$tmp/data" --model.preset=cifar10-tutorial --model.classes=4 \
      --train.run-dir="$tmp/runs" --train.name=big 2>&1); rc=$?
echo "exit $rc: $out"
[[ $rc -eq 2 && "$out" == *"data.crop-size 24 is larger than the images (4x4x1)"* ]] || fail "a crop of 24 was not refused by name"
[[ ! -e "$tmp/runs/big" ]] || fail "a refused run left a folder"
finish
