#!/usr/bin/env bash
# A user's own data (issue 36): the same small data set as IDX files, as a Keras-layout .npz
# (numpy writes it) and as class folders of PNG and JPEG files (PIL writes them):
#  1. the same seeded run from IDX and from the .npz ends with the same test loss, to the digit;
#  2. PNG and JPEG folders train to the IDX run's accuracy within noise, with the folders' names
#     as class names in summary.json;
#  3. a local cluster (1 shard, 2 workers) trains from a PNG folder;
#  4. actorps-eval and actorps-predict show the class names of a model trained on the folder;
#  5. bad input, each a named error with a non-zero exit and no run folder: a corrupt PNG, a
#     truncated JPEG, an empty class folder, mixed image sizes without data.resize (and with it
#     the run trains), an .npz without x_test, x and y of different lengths, a label outside
#     class_names.
# Usage: user_data_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
make=$root/tests/integration/make_user_data.py
python3 "$root/tests/integration/make_quadrants.py" "$tmp/idx"
"$py" "$make" npz "$tmp/idx" "$tmp/q.npz" || fail "writing the .npz failed"
"$py" "$make" folder "$tmp/idx" "$tmp/png" png || fail "writing the PNG folder failed"
"$py" "$make" folder "$tmp/idx" "$tmp/jpg" jpg || fail "writing the JPEG folder failed"
opts=(--model.hidden=[16] --model.classes=4 --train.max-epochs=0 --train.max-steps=600 --train.patience=0
      --train.eval-every-epochs=0 --train.eval-every=300)
train() { # train NAME DATA [options]: a single-process run
  local name=$1 data=$2
  shift 2
  "$bin/actorps-train" "${opts[@]}" --data.dir="\"$data\"" --train.run-dir="$tmp/runs" --train.name="$name" "$@" \
    > "$tmp/$name.log" 2>&1 || { fail "$name: training failed"; tail -3 "$tmp/$name.log"; }
}

echo "== 1. IDX and .npz"
train idx "$tmp/idx"
train npz "$tmp/q.npz"
a=$(field "$tmp/runs/idx/summary.json" final_test_loss) b=$(field "$tmp/runs/npz/summary.json" final_test_loss)
echo "final test loss: IDX $a, npz $b"
[[ -n "$a" && "$a" == "$b" ]] || fail "the .npz run differs from the IDX run ($a vs $b)"

echo "== 2. PNG and JPEG folders"
train png "$tmp/png" --data.threads=2
train jpg "$tmp/jpg" --data.prefetch-batches=0
for run in idx png jpg; do echo "$run: test accuracy $(field "$tmp/runs/$run/summary.json" test_accuracy)"; done
for run in png jpg; do
  above "$(field "$tmp/runs/$run/summary.json" test_accuracy)" 0.85 || fail "$run: test accuracy below 0.85"
  names=$(field "$tmp/runs/$run/summary.json" class_names)
  [[ "$names" == "['0-T-shirt-top', '1-Trouser', '2-Pullover', '3-Dress']" ]] || fail "$run: class names $names"
done

echo "== 3. a local cluster from a PNG folder"
cluster --ps 1 --workers 2 --name folder-cluster --deadline 120 -- "${opts[@]}" --data.dir="\"$tmp/png\"" \
  > "$tmp/cluster.out" 2>&1 || { fail "the cluster failed"; tail -10 "$tmp/cluster.out"; }
above "$(field "$tmp/runs/folder-cluster/summary.json" test_accuracy 2>/dev/null || echo 0)" 0.85 \
  || fail "the cluster's test accuracy is below 0.85"

echo "== 4. class names in actorps-eval and actorps-predict"
out=$("$bin/actorps-eval" "$tmp/runs/png/model/final" --data.dir="$tmp/png" --out="$tmp/eval.json" 2>&1) \
  || fail "actorps-eval failed: $out"
grep -q "1-Trouser" <<< "$out" || fail "actorps-eval's table has no class names: $out"
grep -q '"class_names": \["0-T-shirt-top"' "$tmp/eval.json" || fail "eval.json has no class names"
image=$(ls "$tmp/png/test/3-Dress" | head -n 1)
out=$("$bin/actorps-predict" "$tmp/runs/png/model/final" "$tmp/png/test/3-Dress/$image" --output=jsonl 2>&1) \
  || fail "actorps-predict failed: $out"
echo "$out"
grep -q '"name": "3-Dress"' <<< "$out" || fail "actorps-predict did not name the class 3-Dress"

echo "== 5. bad input"
expect_bad() { # expect_bad TEXT DATA [options]: the run fails naming TEXT, and writes no run folder
  local want=$1 data=$2 out rc
  shift 2
  out=$("$bin/actorps-train" "${opts[@]}" --data.dir="\"$data\"" --train.run-dir="$tmp/bad-runs" --train.name=bad "$@" 2>&1)
  rc=$?
  if [[ $rc -eq 0 || "$out" != *"$want"* ]]; then
    fail "$data: exit $rc, output: $(tail -c 300 <<< "$out") (want: $want)"
  else
    echo "ok: $(grep -m1 error: <<< "$out")"
  fi
  [[ -e "$tmp/bad-runs/bad/summary.json" ]] && fail "$data: a failed load wrote a summary"
}
cp -r "$tmp/png" "$tmp/corrupt"
victim=$(ls "$tmp/corrupt/train/2-Pullover" | head -n 1)
printf 'not a png at all' > "$tmp/corrupt/train/2-Pullover/$victim"
expect_bad "$tmp/corrupt/train/2-Pullover/$victim: not a PNG image" "$tmp/corrupt"
cp -r "$tmp/jpg" "$tmp/truncated"
victim=$(ls "$tmp/truncated/test/1-Trouser" | head -n 1)
head -c 200 "$tmp/jpg/test/1-Trouser/$victim" > "$tmp/truncated/test/1-Trouser/$victim"
expect_bad "$tmp/truncated/test/1-Trouser/$victim: a corrupt JPEG" "$tmp/truncated"
cp -r "$tmp/png" "$tmp/empty" && mkdir "$tmp/empty/train/4-Coat"
expect_bad "$tmp/empty/train/4-Coat: an empty class folder" "$tmp/empty"
cp -r "$tmp/png" "$tmp/mixed"
victim=$(ls "$tmp/mixed/train/0-T-shirt-top" | head -n 1)
"$py" -c "from PIL import Image; import sys; Image.new('L', (6, 5)).save(sys.argv[1])" "$tmp/mixed/train/0-T-shirt-top/$victim"
expect_bad "6x5 pixels, the first training image is 4x4 (set data.resize" "$tmp/mixed"
train resized "$tmp/mixed" --data.resize='"4x4"'
"$py" - "$tmp" <<'PY'
import numpy as np, sys
t = sys.argv[1]
d = dict(np.load(f"{t}/q.npz"))
np.savez(f"{t}/no-test.npz", **{k: v for k, v in d.items() if k != "x_test"})
np.savez(f"{t}/lengths.npz", **{**d, "y_train": d["y_train"][:-1]})
np.savez(f"{t}/label.npz", **{**d, "y_test": np.where(np.arange(len(d["y_test"])) == 5, 7, d["y_test"])})
PY
expect_bad "$tmp/no-test.npz: has no array x_test" "$tmp/no-test.npz"
expect_bad "$tmp/lengths.npz: x_train holds 1200 images but y_train has shape 1199" "$tmp/lengths.npz"
expect_bad "$tmp/label.npz: y_test[5] = 7 is not a class" "$tmp/label.npz"

finish
