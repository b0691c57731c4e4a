#!/usr/bin/env bash
# The benchmarks of the models issue, measured side by side in one run against PyTorch
# (../shared/bench/torch_reference.py on Debian's python3-torch, installed here when missing):
#  1. training examples/s of one step at batch 50, 1 thread, random 28x28 data: the reference MLP
#     and the cnn preset, actorps (actorps-bench-compute) vs PyTorch (torch_reference.py speed);
#  2. the cnn preset on Fashion-MNIST, single process: test accuracy after EPOCHS epochs and the
#     training seconds to 91% test accuracy, actorps vs PyTorch (the same network and optimizer);
#  3. the async cluster (1 shard, 2 workers) on the cnn preset vs the single-process trainer,
#     the same number of steps (20 epochs by default): examples/s and test accuracy. The shards
#     use the single process's learning rate (train.async-lr-scaling = none): the default halves
#     it for 2 workers, which left the cluster ~1.8 points behind after 15 epochs. Neither run
#     evaluates per epoch (train.eval-every-epochs = 0): the single process leaves its evaluations
#     out of its training seconds, while the cluster's chief would run them on the workers' two
#     cores inside the cluster's; the final evaluation is outside both rates. One cluster run per
#     wire precision (fp32, and bf16: half the bytes);
#  4. the seeds' sigmoid net and softmax regression, single process.
# Usage: bench/models_bench.sh [EPOCHS=15] [CLUSTER_STEPS=22000] [DATA_DIR]   (after scripts/build.sh)
# SECTIONS=3 bench/models_bench.sh runs only the sections listed (default 1234); CLUSTER_WIRE
# (default "fp32 bf16") the wire precisions of section 3's cluster runs.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-15}
cluster_steps=${2:-22000}
data=${3:-/usr/share/datasets/fashion-mnist}
sections=${SECTIONS:-1234}
cluster_wire=${CLUSTER_WIRE:-fp32 bf16} # section 3: one cluster run per cluster.wire-precision
bin=build/bin
torch_ref=$(cd .. && pwd)/shared/bench/torch_reference.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
jfield() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
if [[ $sections == *[12]* ]]; then
  bench/install_torch.sh models_bench
  [[ -f "$torch_ref" ]] || { echo "models_bench: $torch_ref is missing" >&2; exit 1; }
fi

if [[ $sections == *1* ]]; then
echo "== 1. one training step at batch 50, 1 thread (examples/s)"
"$bin/actorps-bench-compute" 3 1 2> /dev/null | tee "$tmp/ours.txt" | grep -v '^{'
/usr/bin/python3 "$torch_ref" speed 1 2> /dev/null | tee "$tmp/torch.txt"
python3 - "$tmp/ours.txt" "$tmp/torch.txt" <<'PY'
import json, sys
ours = {(j["model"], j["batch"]): j["examples_per_second"] for j in map(json.loads, (l for l in open(sys.argv[1]) if l.startswith("{")))}
torch = {j["model"]: j["examples_per_second"] for j in map(json.loads, open(sys.argv[2]))}
for model in ("mlp", "cnn"):
    a = ours[("reference" if model == "mlp" else "cnn", 50)]
    print(f"{model}: actorps {a:.0f} vs PyTorch {torch[model]:.0f} examples/s: {a / torch[model]:.2f}x")
PY
fi

if [[ $sections == *2* ]]; then
echo "== 2. cnn preset on $data, single process, $epochs epochs"
"$bin/actorps-train" --model.preset='"cnn"' --data.dir="\"$data\"" --train.max-epochs="$epochs" --train.patience=0 \
  --train.run-dir="$tmp" --train.name=cnn-single --compute.device='"cpu"' --train.progress-every=100000 \
  --train.target-accuracy=0.0 > "$tmp/cnn-single.out" 2>&1
ours_acc=$(field "$tmp/cnn-single/summary.json" final_test_accuracy)
ours_eps=$(field "$tmp/cnn-single/summary.json" examples_per_second)
ours_t91=$(python3 - "$tmp/cnn-single/metrics.jsonl" <<'PY'
import json, sys
for row in map(json.loads, open(sys.argv[1])):
    if row.get("test_accuracy", 0) >= 0.91:
        print(round(row["train_seconds"], 1)); break
else:
    print("never")
PY
)
torch_line=$(/usr/bin/python3 "$torch_ref" cnn "$data" "$epochs" 0.91 2> "$tmp/torch-cnn.err" | tail -1)
echo "actorps: final test accuracy $ours_acc, $ours_eps examples/s, training seconds to 91% test accuracy: $ours_t91"
echo "PyTorch: best test accuracy $(jfield "$torch_line" best_test_accuracy), $(jfield "$torch_line" examples_per_second) examples/s, seconds to 91%: $(jfield "$torch_line" seconds_to_target)"
fi

if [[ $sections == *3* ]]; then
echo "== 3. async cluster (1 shard, 2 workers) vs single process, cnn preset, $cluster_steps steps"
common=(--model.preset='"cnn"' --data.dir="\"$data\"" --train.max-steps="$cluster_steps" --train.max-epochs=0
        --train.patience=0 --train.progress-every=100000 --compute.device='"cpu"' --train.eval-every-epochs=0)
"$bin/actorps-train" "${common[@]}" --train.run-dir="$tmp" --train.name=steps-single > "$tmp/steps-single.out" 2>&1
for wire in $cluster_wire; do
  scripts/local-cluster.sh --ps 1 --workers 2 --name "steps-cluster-$wire" --run-dir "$tmp" -- "${common[@]}" \
    --train.async-lr-scaling='"none"' --cluster.wire-precision="\"$wire\"" > "$tmp/steps-cluster-$wire.out" 2>&1
done
python3 - "$tmp/steps-single" $(for wire in $cluster_wire; do echo "$tmp/steps-cluster-$wire"; done) <<'PY'
import json, sys
s = json.load(open(f"{sys.argv[1]}/summary.json"))
# Both rates are training examples over training seconds (from the first step to the last
# report); the wall-clock rates add start-up and the final evaluation.
wall = lambda r: r['steps'] * r['batch_size'] / r['wall_seconds']
print(f"single process: {s['examples_per_second']:.0f} examples/s training ({wall(s):.0f} over its wall time), test accuracy {s['final_test_accuracy']:.4f}")
for d in sys.argv[2:]:
    c = json.load(open(f"{d}/summary.json"))
    print(f"async cluster, {c['wire_precision']} on the wire: {c['examples_per_second']:.0f} examples/s ({wall(c):.0f} over its wall time), "
          f"test accuracy {c['final_test_accuracy']:.4f} (goal >= 0.91); cluster / single: {c['examples_per_second'] / s['examples_per_second']:.2f}x "
          f"(training rate, goal >= 1.5x), {wall(c) / wall(s):.2f}x (wall-clock rate)")
PY
fi

if [[ $sections == *4* ]]; then
echo "== 4. the seeds' networks, single process, $epochs epochs"
for preset in seed-sigmoid softmax; do
  "$bin/actorps-train" --model.preset="\"$preset\"" --data.dir="\"$data\"" --train.max-epochs="$epochs" \
    --train.patience=0 --train.run-dir="$tmp" --train.name="$preset" --train.progress-every=100000 > "$tmp/$preset.out" 2>&1
  echo "$preset: final test accuracy $(field "$tmp/$preset/summary.json" final_test_accuracy), $(field "$tmp/$preset/summary.json" examples_per_second) examples/s"
done
fi
