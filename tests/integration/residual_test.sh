#!/usr/bin/env bash
# Integration: batch normalisation and residual blocks in real clusters on 127.0.0.1 (small data).
#  1. sync, 1 shard x 2 workers, a residual network with batch normalisation beats chance (25%)
#     by a wide margin, and the seeded run gives the same weights digest twice;
#  2. async, 1 shard x 2 workers, batch normalisation of the input: the moving mean and variance
#     the shard holds track the training data's (what the workers' batches push), and the model
#     exported to .npz carries every variable with TensorFlow's names and shapes;
#  3. actorps-eval on the cluster's model (moving statistics) gives the accuracy summary.json has;
#  4. checkpoints: a sync run saving every 100 steps, then a new cluster on the same directory
#     whose max-steps the newest checkpoint has reached: it finishes at once (it crashed the chief
#     before) with the same weights digest (every variable and moving statistic restored bit for
#     bit), which is also the digest of the checkpoint exported.
# Usage: residual_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
resnet='["conv 3x3x4", "batchnorm relu", "residual [conv 3x3x4, batchnorm relu, conv 3x3x4, batchnorm] relu", "residual [conv 3x3x8 stride 2, batchnorm relu, conv 3x3x8, batchnorm] relu", "avgpool global", "dense 4"]'
common=(--data.dir="$tmp/data" --train.learning-rate=0.05 --compute.device=cpu)

echo "== 1: sync residual network with batch normalisation, twice"
sync_twice 0.6 "${common[@]}" --model.layers="$resnet" --train.max-steps=200 --train.seed=5

echo "== 2: async, batch normalisation of the input: the moving statistics track the data"
if cluster --ps 1 --workers 2 --name async --deadline 120 -- "${common[@]}" \
     --model.layers='["batchnorm", "conv 3x3x4 relu", "dense 4"]' --train.max-steps=600 > "$tmp/async.out" 2>&1; then
  "$bin/actorps-export" "$tmp/runs/async/model/final" "$tmp/async.npz" > "$tmp/export.out" 2>&1 || fail "export failed: $(tail -3 "$tmp/export.out")"
  /usr/bin/python3 - "$tmp/data" "$tmp/async.npz" "$(field "$tmp/runs/async/summary.json" global_step)" <<'PY' || fail "the moving statistics do not track the data"
import gzip, json, sys, zipfile
import numpy as np
d, npz, updates = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = gzip.open(f"{d}/train-images-idx3-ubyte.gz").read()[16:]
x = np.frombuffer(raw, dtype=np.uint8).astype(np.float64) / 255.0
m = np.load(npz)
mean, var = float(m["bn0/moving_mean"][0]), float(m["bn0/moving_variance"][0])
left = 0.99 ** updates  # what is left of the start (mean 0, variance 1) after that many moves
want_mean, want_var = x.mean() * (1 - left), x.var() + (1 - x.var()) * left
print(f"data mean {x.mean():.4f} variance {x.var():.4f}; after {updates} moves from 0 and 1 expect {want_mean:.4f} "
      f"and {want_var:.4f}; the moving mean is {mean:.4f}, the moving variance {var:.4f}")
names = sorted(k for k in m.files if k != "model.json")
shapes = {k: m[k].shape for k in m.files}
print("variables:", ", ".join(f"{k} {list(shapes[k])}" for k in names))
ok = abs(mean - want_mean) < 0.005 and abs(var / want_var - 1) < 0.05
ok &= shapes["bn0/gamma"] == (1,) and shapes["conv0/weights"] == (3, 3, 1, 4) and shapes["logits/weights"] == (64, 4)
ok &= set(names) == {"bn0/gamma", "bn0/beta", "bn0/moving_mean", "bn0/moving_variance", "conv0/weights", "conv0/bias",
                     "logits/weights", "logits/bias"}
sys.exit(0 if ok else 1)
PY
else
  fail "the async cluster failed:"; tail -20 "$tmp/async.out"
fi

echo "== 3: actorps-eval on the sync run's model"
if [[ -d "$tmp/runs/sync1/model/best" ]]; then
  out=$("$bin/actorps-eval" "$tmp/runs/sync1/model/best" --data.dir="$tmp/data" --out="$tmp/eval.json" 2>&1); rc=$?
  want=$(python3 -c "import json,sys; print(f'{100 * json.load(open(sys.argv[1]))[\"test_accuracy\"]:.2f}%')" "$tmp/runs/sync1/summary.json")
  got=$(grep "^test set:" <<< "$out")
  echo "actorps-eval: $got (summary.json: $want)"
  [[ $rc -eq 0 && "$got" == *"accuracy $want" ]] || fail "actorps-eval: exit $rc, want accuracy $want: $out"
fi
echo "== 4: checkpoints restore a residual network with batch normalisation bit for bit"
ckopts=(--model.layers="$resnet" --train.max-steps=300 --train.seed=5 --train.max-epochs=0 --train.patience=0
        --checkpoint.dir="$tmp/ck" --checkpoint.every-steps=100)
if cluster --mode sync --ps 1 --workers 2 --name saved --deadline 120 -- "${common[@]}" "${ckopts[@]}" > "$tmp/saved.out" 2>&1; then
  if cluster --mode sync --ps 1 --workers 2 --name again --deadline 120 -- "${common[@]}" "${ckopts[@]}" > "$tmp/again.out" 2>&1; then
    d1=$(field "$tmp/runs/saved/summary.json" weights_digest) d2=$(field "$tmp/runs/again/summary.json" weights_digest)
    from=$(field "$tmp/runs/again/summary.json" resumed_from_step)
    newest=$(ls "$tmp/ck" | grep '^ckpt-' | tail -1)
    d3=$("$bin/actorps-export" "$tmp/ck/$newest" "$tmp/ck.npz" 2>&1 | sed -n 's/.*weights digest \([0-9a-f]*\)).*/\1/p')
    echo "saved run $d1; resumed from step $from and finished: $d2; $newest exported: $d3"
    [[ "$from" == 300 && "$d1" == "$d2" && "$d2" == "$d3" ]] || fail "the restored values differ ($d1, $d2, $d3, from $from)"
  else
    fail "a cluster resumed at its max-steps failed:"; tail -5 "$tmp/again.out"
  fi
else
  fail "the saving run failed:"; tail -20 "$tmp/saved.out"
fi
finish
