#!/usr/bin/env bash
# The networks of the CIFAR-10 document and ResNet against PyTorch, side by side in one run
# (Debian's python3-torch, installed here when missing; the PyTorch twin of each network is built
# from its layer list by bench/torch_model.py):
#  1. one training step's examples/s at batch 50, 1 thread, random 28x28x1 data, for cnn,
#     cifar10-tutorial, resnet20 and xception-mini: actorps (actorps-bench-compute) vs PyTorch
#     (bench/torch_train.py speed), ROUNDS interleaved rounds, actorps also with OpenBLAS's sgemm
#     (ACTORPS_GEMM=openblas) instead of its own AVX-512 one, and each side's FLOP rate against one
#     core's FMA peak (what any implementation of the same arithmetic is bounded by);
#  2. Fashion-MNIST test accuracy after the same STEPS steps (batch 50, momentum SGD with the
#     preset's rate, decayed to 0 over the STEPS by a cosine: the weights settle, so the test
#     accuracy of one draw depends less on where the last steps left them), resnet20 and
#     xception-mini, actorps-train vs PyTorch from the same initial values (actorps'
#     initialisation, exported after one step at learning rate 0) and with its own initialisation;
#  3. the async cluster (1 shard, 2 workers) vs the single process, the same STEPS steps,
#     cifar10-tutorial and resnet20: examples/s and test accuracy;
#  4. peak RSS of one training process, every preset at batch 50, the same MEM_STEPS steps
#     (default 200) on Fashion-MNIST with a test evaluation at the end: actorps-train (and its
#     backend's own peak) vs bench/torch_train.py train, and what `import torch` alone takes.
# Usage: bench/presets_bench.sh [ROUNDS=2] [STEPS=1000] [DATA_DIR]   (after scripts/build.sh)
# SECTIONS=13 runs only the sections listed (default 1234); SEED=7 draws another initialisation and
# batch order for section 2 (actorps' train.seed and PyTorch's seed; default 42 and 1);
# ACCURACY=resnet20 limits section 2 to those presets; SCHEDULE=constant keeps section 2's rate
# constant (default cosine).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
steps=${2:-1000}
data=${3:-/usr/share/datasets/fashion-mnist}
sections=${SECTIONS:-1234}
seed=${SEED:-}
schedule=${SCHEDULE:-cosine}
bin=build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/install_torch.sh presets_bench
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
jfield() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
presets=(cnn cifar10-tutorial resnet20 xception-mini)

if [[ $sections == *1* ]]; then
echo "== 1. one training step at batch 50, 1 thread, examples/s (28x28x1)"
for ((r = 1; r <= rounds; r++)); do
  for p in "${presets[@]}"; do
    out=$("$bin/actorps-bench-compute" 3 1 "$p" 2> /dev/null)
    ours=$(grep "^{\"model\": \"$p\"" <<< "$out")
    peak=$(grep "^{\"fma_peak_gflops\"" <<< "$out")
    blas=$(ACTORPS_GEMM=openblas "$bin/actorps-bench-compute" 3 1 "$p" 2> /dev/null | grep "^{\"model\": \"$p\"")
    theirs=$(/usr/bin/python3 bench/torch_train.py speed "$ours" 3 2> /dev/null | tail -1)
    python3 - "$r" "$p" "$ours" "$theirs" "$peak" "$blas" <<'PY'
import json, sys
r, p, ours, theirs, peak, blas = sys.argv[1], sys.argv[2], *(json.loads(a) for a in sys.argv[3:])
a, b, g = ours["examples_per_second"], theirs["examples_per_second"], ours["gflop_per_example"]
top = max(peak["fma_peak_gflops"].values())
print(f"  round {r}: {p:18} actorps {a:6.0f}, PyTorch {b:6.0f}: {a / b:.2f}x (with OpenBLAS's sgemm "
      f"{blas['examples_per_second']:.0f}: {blas['examples_per_second'] / b:.2f}x); GFLOP/s (3 x forward) {a * g:5.1f} "
      f"vs {b * g:5.1f}, {100 * a * g / top:.0f}% vs {100 * b * g / top:.0f}% of the core's FMA peak ({top:.0f})")
PY
  done
done
fi

wrap=() # (a command run_single runs actorps-train under: section 4's /usr/bin/time)
run_single() { # NAME PRESET [options]: actorps-train for $steps steps, no evaluation until the end
  "${wrap[@]}" "$bin/actorps-train" --model.preset="\"$2\"" --data.dir="\"$data\"" --train.max-steps="$steps" --train.max-epochs=0 \
    --train.eval-every-epochs=0 --train.patience=0 --train.batch-size=50 --compute.device='"cpu"' \
    --train.run-dir="$tmp" --train.name="$1" --train.progress-every=100000 "${@:3}" > "$tmp/$1.out" 2>&1 \
    || { echo "presets_bench: $1 failed"; tail -5 "$tmp/$1.out"; exit 1; }
}

if [[ $sections == *2* ]]; then
echo "== 2. Fashion-MNIST test accuracy after $steps steps (batch 50, $schedule learning rate), single process, 1 thread"
for p in ${ACCURACY:-resnet20 xception-mini}; do
  run_single "acc-$p" "$p" ${seed:+--train.seed="$seed"} --train.lr-schedule="\"$schedule\"" --train.lr-decay-steps="$steps"
  s=$tmp/acc-$p/summary.json
  model=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({'input': [int(v) for v in s['input'].split('x')], 'layers': s['layers']}))" "$s")
  # the initial values: one step at learning rate 0 (batch norm's moving statistics move, which
  # training does not read), exported
  seeded=()
  [[ -n "$seed" ]] && seeded=(--train.seed="$seed")
  steps=1 run_single "init-$p" "$p" --train.learning-rate=0 "${seeded[@]}"
  "$bin/actorps-export" "$tmp/init-$p/model/final" "$tmp/init-$p.npz" > /dev/null
  lr=$(field "$s" learning_rate)
  same=$(/usr/bin/python3 bench/torch_train.py train "$model" "$data" "$steps" "$lr" 0.9 "${seed:-1}" "$tmp/init-$p.npz" "$schedule" 2> /dev/null | tail -1)
  own=$(/usr/bin/python3 bench/torch_train.py train "$model" "$data" "$steps" "$lr" 0.9 "${seed:-1}" "" "$schedule" 2> /dev/null | tail -1)
  python3 - "$p" "$(field "$s" final_test_accuracy)" "$(field "$s" examples_per_second)" "$same" "$own" <<'PY'
import json, sys
p, ours, eps, same, own = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), json.loads(sys.argv[4]), json.loads(sys.argv[5])
print(f"  {p:14} actorps {ours:.4f} ({eps:.0f} examples/s); PyTorch from the same values {same['test_accuracy']:.4f} "
      f"({100 * (ours - same['test_accuracy']):+.2f} points), from its own init {own['test_accuracy']:.4f} "
      f"({100 * (ours - own['test_accuracy']):+.2f} points; {own['examples_per_second']} examples/s)")
PY
done
fi

if [[ $sections == *3* ]]; then
echo "== 3. async cluster (1 shard, 2 workers) vs single process, $steps steps"
for p in cifar10-tutorial resnet20; do
  run_single "single-$p" "$p"
  scripts/local-cluster.sh --ps 1 --workers 2 --name "cluster-$p" --run-dir "$tmp" -- --model.preset="\"$p\"" \
    --data.dir="\"$data\"" --train.max-steps="$steps" --train.max-epochs=0 --train.eval-every-epochs=0 --train.patience=0 \
    --train.batch-size=50 --compute.device='"cpu"' --train.progress-every=100000 > "$tmp/cluster-$p.out" 2>&1 \
    || { echo "presets_bench: cluster-$p failed"; tail -5 "$tmp/cluster-$p.out"; exit 1; }
  python3 - "$p" "$tmp/single-$p/summary.json" "$tmp/cluster-$p/summary.json" <<'PY'
import json, sys
p, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
print(f"  {p:18} single {a['examples_per_second']:6.0f} examples/s, test {a['final_test_accuracy']:.4f}; "
      f"cluster {b['examples_per_second']:6.0f}, test {b['final_test_accuracy']:.4f}: "
      f"{b['examples_per_second'] / a['examples_per_second']:.2f}x")
PY
done
fi

if [[ $sections == *4* ]]; then
mem_steps=${MEM_STEPS:-200}
echo "== 4. peak RSS of one training process, batch 50, $mem_steps steps + a test evaluation, 1 thread (MiB)"
peak_kib() { /usr/bin/time -f "%M" -o "$tmp/peak" "$@" > "$tmp/peak.out" 2>&1 || { echo "presets_bench: $1 failed"; tail -5 "$tmp/peak.out"; exit 1; }; cat "$tmp/peak"; }
wrap=(/usr/bin/time -f "%M" -o "$tmp/ours")
torch_alone=$(peak_kib /usr/bin/python3 -c "import torch")
echo "  import torch alone: $((torch_alone / 1024)) MiB"
for p in reference cnn cifar10-tutorial resnet20 xception-mini; do
  # (whole 28x28 images, no distortions: what the PyTorch twin trains on)
  steps=$mem_steps run_single "mem-$p" "$p" --data.crop-size=0 --data.augment='"none"' --data.brightness=0 \
    --data.contrast='"none"' --data.standardize='"none"'
  ours=$(cat "$tmp/ours")
  s=$tmp/mem-$p/summary.json
  model=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({'input': [int(v) for v in s['input'].split('x')], 'layers': s['layers']}))" "$s")
  theirs=$(peak_kib /usr/bin/python3 bench/torch_train.py train "$model" "$data" "$mem_steps" "$(field "$s" learning_rate)" 0.9)
  python3 - "$p" "$ours" "$theirs" "$(field "$s" device_memory_peak_bytes)" <<'PY'
import sys
p, ours, theirs, device = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"  {p:18} actorps {ours / 1024:5.0f} (backend peak {device / 2**20:4.0f}), PyTorch {theirs / 1024:5.0f}: "
      f"{ours / theirs:.2f}x (goal <= 1.0x)")
PY
done
wrap=()
fi
