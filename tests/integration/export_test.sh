#!/usr/bin/env bash
# Using a trained model, as a user would (docs/export.md):
#  1. actorps-train keeps its final and best model; train.save-model = none keeps none;
#  2. actorps-export writes an .npz whose every array equals the checkpoint's values bit for bit
#     (the checkpoint read by docs/checkpoint_format.md alone: tests/integration/read_checkpoint.py);
#  3. docs/export.md's NumPy forward pass gives actorps-eval's test accuracy (to 1e-4);
#  4. model.init-from starts from exactly the exported values (weights digests) and names a
#     variable whose shape differs;
#  5. actorps-eval on a written data set with known answers, the model from numpy.savez_compressed;
#  6. actorps-predict on PNGs written here: the same answers as on the IDX file they came from
#     (probabilities to 1e-5: one image per matrix product rounds apart from batches of 1,000);
#  7. bad input: each a named error and a non-zero exit, no half-written export;
#  8. a residual network with batch normalisation: its .npz equals the checkpoint bit for bit,
#     docs/export.md's residual NumPy forward pass gives actorps-eval's accuracy, and the .npz
#     back into a checkpoint exports to the same digest.
# Usage: export_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
py=python3
/usr/bin/python3 -c "import numpy" 2> /dev/null && py=/usr/bin/python3
$py -c "import numpy" || { echo "FAIL: numpy is missing (scripts/install-deps.sh installs python3-numpy)"; exit 1; }
data=/usr/share/datasets/fashion-mnist
cd "$tmp"
# expect_error CODE TEXT COMMAND...: the command exits with CODE and says TEXT
expect_error() {
  local code=$1 text=$2; shift 2
  "$@" > out.txt 2>&1; local rc=$?
  [[ $rc -eq $code ]] || { fail "exit $rc, not $code: $*"; cat out.txt; return; }
  grep -qF -- "$text" out.txt || { fail "no \"$text\" from: $*"; cat out.txt; }
}

echo "== 1: every run keeps its model"
"$bin/actorps-train" --train.name=mlp --train.run-dir=runs --train.max-steps=400 --train.max-epochs=0 \
  --train.patience=0 --train.eval-every=200 > train.out 2>&1 || { fail "training failed"; tail train.out; }
for m in final best; do
  [[ -f runs/mlp/model/$m/manifest.bin ]] || fail "runs/mlp/model/$m was not written"
done
grep -q '"models": {"final": "runs/mlp/model/final", "best": "runs/mlp/model/best"}' runs/mlp/summary.json \
  || fail "summary.json does not name the models"
"$bin/actorps-train" --train.name=none --train.run-dir=runs --train.max-steps=10 --train.max-epochs=0 \
  --train.save-model='"none"' > none.out 2>&1 || fail "a run with train.save-model=none failed"
[[ ! -e runs/none/model ]] || fail "train.save-model=none wrote a model"

echo "== 1b: actorps-eval reads the run's own data set, and refuses one of other classes (issue 50, item 2)"
mkdir -p mnist-digits # (Fashion-MNIST's files under a name that makes them MNIST's digits)
for f in "$data"/*; do ln -s "$f" mnist-digits/; done
"$bin/actorps-train" --train.name=digits --train.run-dir=runs --train.max-steps=10 --train.max-epochs=0 \
  --data.dir="\"$tmp/mnist-digits\"" > digits.out 2>&1 || { fail "training on the digits failed"; tail digits.out; }
"$bin/actorps-eval" runs/digits --set=test --out=digits.json > digits_eval.out 2>&1 \
  || { fail "actorps-eval of the digits run failed"; cat digits_eval.out; }
grep -qF "data $tmp/mnist-digits (the run's data set" digits_eval.out || { fail "actorps-eval did not read the run's data"; cat digits_eval.out; }
expect_error 1 "knows the classes 0, 1, 2, 3, 4, 5, 6, 7, 8, 9; $data has T-shirt/top" \
  "$bin/actorps-eval" runs/digits --data.dir="$data"

echo "== 2: export to .npz, every array equal to the checkpoint's values"
"$bin/actorps-export" runs/mlp m.npz > export.out 2>&1 || { fail "export failed"; cat export.out; }
cat export.out
$py "$root/tests/integration/read_checkpoint.py" runs/mlp/model/best m.npz || fail "the npz differs from the checkpoint"

echo "== 3: the NumPy forward pass of docs/export.md against actorps-eval"
sed -n '/numpy-forward-pass/,/^```$/p' "$root/docs/export.md" | sed '1,2d;$d' | sed 's#"model.npz"#"m.npz"#' > forward.py
numpy_acc=$($py forward.py | awk '{print $3}')
"$bin/actorps-eval" m.npz --set=test --out=eval.json --plot > eval.out 2>&1 || { fail "actorps-eval failed"; cat eval.out; }
eval_acc=$($py -c "import json; print(json.load(open('eval.json'))['test']['accuracy'])")
echo "NumPy $numpy_acc, actorps-eval $eval_acc, the run's summary $(field runs/mlp/summary.json test_accuracy)"
$py -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1e-4 else 1)" "$numpy_acc" "$eval_acc" \
  || fail "NumPy ($numpy_acc) and actorps-eval ($eval_acc) disagree"
$py -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1e-4 else 1)" \
  "$(field runs/mlp/summary.json test_accuracy)" "$eval_acc" || fail "actorps-eval disagrees with the run's summary"
[[ -s eval.png ]] || fail "--plot drew no eval.png"

echo "== 4: model.init-from"
digest=$(sed -n 's/.*weights digest \([0-9a-f]*\)).*/\1/p' export.out)
"$bin/actorps-train" --train.name=again --train.run-dir=runs --train.max-steps=1 --train.max-epochs=0 \
  --model.init-from=m.npz > again.out 2>&1 || { fail "training from m.npz failed"; tail again.out; }
grep -q "starting from the values of m.npz (weights digest $digest)" again.out \
  || { fail "the run did not start from the exported values ($digest)"; grep starting again.out; }
expect_error 2 "model.init-from m.npz: dense0/weights has shape 784x160, this model's is 784x100" \
  "$bin/actorps-train" --train.name=bad --train.run-dir=runs --model.hidden=[100] --model.init-from=m.npz
expect_error 2 "model.init-from absent.npz: no such file or directory" \
  "$bin/actorps-train" --train.run-dir=runs --model.init-from=absent.npz

echo "== 5: evaluation with known answers (a model written by numpy.savez_compressed)"
mkdir known
want=$($py "$root/tests/integration/make_known_eval.py" known known.npz)
"$bin/actorps-eval" known.npz --data.dir=known --data.validation-size=5 --out=known.json > known.out 2>&1 \
  || { fail "eval of the known model failed"; cat known.out; }
$py - "$want" known.json <<'PY' || fail "the known evaluation is wrong"
import json, sys
want, got = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))["test"]
ok = abs(got["accuracy"] - want["accuracy"]) < 1e-9 and abs(got["loss"] - want["loss"]) < 1e-4 and got["examples"] == 20
for label, predicted in want["wrong"]:
    ok = ok and got["confusion"][label][predicted] == 1
ok = ok and sum(got["confusion"][c][c] for c in range(10)) == 18 and got["class_accuracy"][5] == 2 / 4
print("known set: accuracy", got["accuracy"], "loss", got["loss"], "(want", want["loss"], ")")
sys.exit(0 if ok else 1)
PY

echo "== 6: actorps-predict on PNGs"
for i in 0 1; do $py "$root/tests/integration/make_png.py" img$i.png 0 0 1 "$data/t10k-images-idx3-ubyte.gz:$i"; done
$py "$root/tests/integration/make_png.py" rgb.png 28 28 3
$py "$root/tests/integration/make_png.py" big.png 40 30 1
"$bin/actorps-predict" m.npz img0.png img1.png --output=jsonl --top=3 > png.jsonl 2> png.err || { fail "predict failed"; cat png.err; }
"$bin/actorps-predict" m.npz "$data/t10k-images-idx3-ubyte.gz" --output=jsonl --top=3 > idx.jsonl 2>&1 \
  || fail "predict on the IDX file failed"
$py - png.jsonl idx.jsonl <<'PY' || fail "PNG and IDX predictions differ"
import json, sys
png = [json.loads(l) for l in open(sys.argv[1])]
idx = [json.loads(l) for l in open(sys.argv[2])]
print("PNG:", [(p["class"], p["probability"]) for p in png], "IDX:", [(p["class"], p["probability"]) for p in idx[:2]],
      "of", len(idx))
ok = len(png) == 2 and len(idx) == 10000 and all(len(p["top"]) == 3 for p in png)
# the same classes; probabilities to 1e-5 (one image per gemm against batches of 1,000 round apart)
ok = ok and all([t["class"] for t in png[i]["top"]] == [t["class"] for t in idx[i]["top"]] and
                all(abs(a["probability"] - b["probability"]) < 1e-5 for a, b in zip(png[i]["top"], idx[i]["top"]))
                for i in range(2))
sys.exit(0 if ok else 1)
PY
"$bin/actorps-predict" m.npz big.png --resize > resized.txt 2>&1 || fail "--resize did not classify big.png"
expect_error 1 "rgb.png: an RGB image (3 channels), the model takes 1 (grey)" "$bin/actorps-predict" m.npz rgb.png
expect_error 1 "big.png: 40x30 pixels, the model takes 28x28 (pass --resize to scale it)" \
  "$bin/actorps-predict" m.npz big.png
head -c 60 img0.png > cut.png
expect_error 1 "cut.png: a corrupt PNG" "$bin/actorps-predict" m.npz img0.png cut.png

echo "== 7: bad input"
expect_error 1 "absent: no such file or directory" "$bin/actorps-eval" absent
head -c 3000 m.npz > cut.npz
expect_error 1 "cut.npz: truncated" "$bin/actorps-eval" cut.npz
head -c 5000 /dev/urandom > foreign.npz
expect_error 1 "foreign.npz: neither an .npz file nor a checkpoint directory" "$bin/actorps-export" foreign.npz x.npz
cp -r runs/mlp/model/best damaged
printf 'garbage' | dd of=damaged/shard-0.bin bs=1 seek=4000 conv=notrunc 2> /dev/null
expect_error 1 "damaged/shard-0.bin: checksum mismatch" "$bin/actorps-predict" damaged img0.png
expect_error 1 "no/such/dir/out.npz" "$bin/actorps-export" m.npz no/such/dir/out.npz
[[ -z "$(ls no 2> /dev/null)" ]] || fail "a failed export left a file"
expect_error 2 "unknown option --tpo" "$bin/actorps-predict" m.npz img0.png --tpo=3
expect_error 2 "got 1 argument(s), expected 2" "$bin/actorps-export" m.npz

echo "== 8: a residual network with batch normalisation"
"$bin/actorps-train" --train.name=res --train.run-dir=runs --train.max-steps=300 --train.max-epochs=0 --train.patience=0 \
  --train.learning-rate=0.05 --model.layers='["conv 3x3x8 stride 2", "batchnorm relu", "residual [conv 3x3x8, batchnorm relu, conv 3x3x8, batchnorm] relu", "residual [conv 3x3x16 stride 2, batchnorm relu, conv 3x3x16, batchnorm] relu", "avgpool global", "dense 10"]' \
  > res.out 2>&1 || { fail "training the residual network failed"; tail res.out; }
"$bin/actorps-export" runs/res res.npz > res_export.out 2>&1 || { fail "export failed"; cat res_export.out; }
$py "$root/tests/integration/read_checkpoint.py" runs/res/model/best res.npz > /dev/null || fail "the residual npz differs from the checkpoint"
sed -n '/numpy-residual-forward/,/^```$/p' "$root/docs/export.md" | sed '1,2d;$d' | sed 's#"model.npz"#"res.npz"#' > res_forward.py
numpy_acc=$($py res_forward.py | awk '{print $3}')
"$bin/actorps-eval" res.npz --set=test --out=res_eval.json > res_eval.out 2>&1 || { fail "actorps-eval failed"; cat res_eval.out; }
eval_acc=$($py -c "import json; print(json.load(open('res_eval.json'))['test']['accuracy'])")
echo "residual network: NumPy $numpy_acc, actorps-eval $eval_acc"
$py -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1e-4 else 1)" "$numpy_acc" "$eval_acc" \
  || fail "NumPy ($numpy_acc) and actorps-eval ($eval_acc) disagree on the residual network"
"$bin/actorps-export" res.npz res_ckpt --format=checkpoint > back.out 2>&1 || { fail "npz to checkpoint failed"; cat back.out; }
"$bin/actorps-export" res_ckpt res2.npz > res2.out 2>&1 || { fail "re-export failed"; cat res2.out; }
d1=$(sed -n 's/.*weights digest \([0-9a-f]*\)).*/\1/p' res_export.out) d2=$(sed -n 's/.*weights digest \([0-9a-f]*\)).*/\1/p' res2.out)
echo "weights digests: $d1, after the round trip $d2"
[[ -n "$d1" && "$d1" == "$d2" ]] || fail "the round trip changed the residual network's values ($d1, $d2)"

finish
