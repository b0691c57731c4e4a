#!/usr/bin/env bash
# The GPU checks and figures, for a machine with an NVIDIA GPU, side by side in one run:
#  1. the GPU test module (every backend op against the CPU backend, device selection);
#  2. the single-process trainer on the GPU, reference MLP and cnn preset, batch 50, its copies through
#     pinned staging (the default) and from pageable memory (compute.pinned-copies = false);
#  3. async clusters of 1 shard x 1 GPU worker and 1 shard x 2 GPU workers (both on the one GPU)
#     against the single GPU process, same steps, reference MLP and cnn preset, each also with
#     overlapped steps (cluster.overlap-steps = 1), printed as ratios with each run's GPU memory peak.
# Usage: bench/gpu_bench.sh [mlp-steps=6000] [cnn-steps=2000]   (after scripts/build.sh)
# ACTORPS_BIN names another folder of binaries (default build/bin), ACTORPS_GPU_TESTS the GPU
# test binary (default build/tests/gpu_tests), ACTORPS_DATA_DIR the IDX folder.
set -uo pipefail
cd "$(dirname "$0")/.."
mlp_steps=${1:-6000}
cnn_steps=${2:-2000}
bin=$(realpath "${ACTORPS_BIN:-build/bin}")
tests=${ACTORPS_GPU_TESTS:-build/tests/gpu_tests}
data=${ACTORPS_DATA_DIR:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
# The GPU memory peak of a run: the trainer's own, or each cluster worker's largest.
gpu_peak() { python3 -c "import json,sys; s = json.load(open(sys.argv[1]))
print(s.get('device_memory_peak_bytes') or ' '.join(str(max(w['memory_peak_bytes'] or [0])) for w in s.get('worker_devices', [])))" "$1"; }

command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
echo "== 1. GPU tests ($tests)"
"$tests" --log_level=test_suite --report_level=short 2>&1 | grep -E "Leaving test case|error|fail|passed|skipped|comparing" | tail -n 60

declare -A eps=()
for model in reference cnn; do
  steps=$mlp_steps; [[ $model == cnn ]] && steps=$cnn_steps
  common=(--model.preset="\"$model\"" --data.dir="\"$data\"" --train.max-steps="$steps" --train.max-epochs=0
          --train.progress-every=100000 --compute.device=gpu)
  echo "== 2/3. $model, $steps steps of batch 50 on the GPU: single process, 1 shard x 1 worker, 1 shard x 2 workers"
  "$bin/actorps-train" "${common[@]}" --train.run-dir="\"$tmp\"" --train.name='"single"' > "$tmp/single-$model.log" 2>&1 \
    || { echo "gpu_bench: the single $model run failed:"; tail -n 5 "$tmp/single-$model.log"; }
  mv "$tmp/single" "$tmp/single-$model" 2> /dev/null
  "$bin/actorps-train" "${common[@]}" --compute.pinned-copies=false --train.run-dir="\"$tmp\"" --train.name='"pageable"' \
    > "$tmp/pageable-$model.log" 2>&1 || { echo "gpu_bench: the pageable $model run failed:"; tail -n 5 "$tmp/pageable-$model.log"; }
  mv "$tmp/pageable" "$tmp/pageable-$model" 2> /dev/null
  for workers in 1 2; do
    for overlap in 0 1; do
      run=$([[ $overlap == 1 ]] && echo o || echo c)$workers
      scripts/local-cluster.sh --bin "$bin" --ps 1 --workers "$workers" --name "$run-$model" --run-dir "$tmp" -- "${common[@]}" \
        --cluster.overlap-steps=$overlap > "$tmp/$run-$model.log" 2>&1 \
        || { echo "gpu_bench: the $model cluster $run failed:"; tail -n 8 "$tmp/$run-$model.log"; }
    done
  done
  grep -h -i -E "device|gpu|cuda" "$tmp/single-$model.log" | head -n 3
  for run in single pageable c1 c2 o1 o2; do # (o: overlapped steps)
    s="$tmp/$run-$model/summary.json"
    eps[$run-$model]=$(field "$s" examples_per_second 2> /dev/null || echo 0)
    printf '  %-8s %10.0f examples/s  final test accuracy %s  GPU memory peak %s bytes\n' "$run" "${eps[$run-$model]}" \
      "$(field "$s" final_test_accuracy 2> /dev/null || echo '?')" "$(gpu_peak "$s" 2> /dev/null || echo '?')"
  done
done
echo "== goals"
for model in reference cnn; do
  python3 -c "import sys; p, q = map(float, sys.argv[1:3]); print(f'  {sys.argv[3]:9} one GPU process, copies through pinned staging / from pageable memory: {p / q if q else 0:.2f}x')" \
    "${eps[single-$model]}" "${eps[pageable-$model]}" "$model"
  python3 -c "import sys; s, c1, c2, o1, o2 = map(float, sys.argv[1:6]); r = lambda c: c / s if s else 0; print(f'  {sys.argv[6]:9} / one GPU process: 1 shard x 1 GPU worker {r(c1):.2f}x, overlapped {r(o1):.2f}x (goal >= 0.9x); 1 shard x 2 GPU workers {r(c2):.2f}x, overlapped {r(o2):.2f}x (goal >= 0.8x)')" \
    "${eps[single-$model]}" "${eps[c1-$model]}" "${eps[c2-$model]}" "${eps[o1-$model]}" "${eps[o2-$model]}" "$model"
done
