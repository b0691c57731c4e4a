#!/usr/bin/env bash
# Integration: towers (compute.devices) and the device options in real processes.
#  1. 1 shard x 1 worker training 2 CPU towers on a small synthetic IDX set learns; summary.json
#     names the worker's devices as TensorFlow does, with each tower's memory peak, and the
#     tensor bytes pushed per example are half those of 2 workers of 1 device (same examples);
#  2. the trainer's summary.json reports its backend's memory peak; a GPU-only memory fraction
#     on the CPU fallback is one log line, not an error;
#  3. a malformed device, a bad compute.gpu-memory, a device the machine lacks (gpu:7) and towers
#     on model-parallel workers are refused by name with exit 2 (the options) or 1 (the worker's
#     set-up).
# Usage: towers_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
common=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.1 --compute.device=cpu)
json() { python3 -c "import json,sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo "== 1: 1 worker x 2 CPU towers vs 2 workers, 1 shard, 6000 examples each"
if cluster --ps 1 --workers 1 --name towers --deadline 120 -- "${common[@]}" --train.batch-size=100 --train.max-steps=60 \
     '--compute.devices=["cpu:0", "/device:CPU:1"]' > "$tmp/towers.out" 2>&1 \
   && cluster --ps 1 --workers 2 --name workers --deadline 120 -- "${common[@]}" --train.batch-size=50 --train.max-steps=120 \
     > "$tmp/workers.out" 2>&1; then
  s=$tmp/runs/towers/summary.json
  acc=$(field "$s" test_accuracy)
  echo "towers: test accuracy $acc"
  above "$acc" 0.6 || fail "towers: accuracy $acc"
  devices=$(json "$s" 's["worker_devices"][0]["devices"]')
  echo "worker 0's devices: $devices"
  [[ "$devices" == "['/job:worker/task:0/device:CPU:0', '/job:worker/task:0/device:CPU:1']" ]] || fail "towers: devices $devices"
  peaks=$(json "$s" 's["worker_devices"][0]["memory_peak_bytes"]')
  echo "their memory peaks: $peaks"
  json "$s" 'all(p > 10000 for p in s["worker_devices"][0]["memory_peak_bytes"])' | grep -q True || fail "towers: peaks $peaks"
  grep -q "towers on /job:worker/task:0/device:CPU:0, /job:worker/task:0/device:CPU:1" "$tmp/runs/towers/logs/worker-0.log" \
    || fail "towers: the worker's log does not name its towers"
  per_towers=$(json "$s" 's["tensor_bytes_sent"] / (s["worker_steps"] * 100)')
  per_workers=$(json "$tmp/runs/workers/summary.json" 's["tensor_bytes_sent"] / (s["worker_steps"] * 50)')
  echo "bytes pushed per example: towers $per_towers, 2 workers $per_workers"
  python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) * 2 - float(sys.argv[2])) < 1e-6 * float(sys.argv[2]) else 1)" \
    "$per_towers" "$per_workers" || fail "towers do not push half the bytes per example"
  [[ "$(json "$tmp/runs/workers/summary.json" 'len(s["worker_devices"])')" == 2 ]] || fail "workers: not 2 rows of devices"
else
  fail "a towers or workers cluster failed:"; tail -n 20 "$tmp/towers.out" "$tmp/workers.out"
fi

echo "== 2: the trainer's memory peak; a memory fraction on the CPU"
if "$bin/actorps-train" "${common[@]}" --compute.device=auto --compute.gpu-memory='"fraction:0.5"' --train.max-steps=50 \
     --train.name=single --train.run-dir="$tmp/runs" > "$tmp/single.out" 2>&1; then
  peak=$(field "$tmp/runs/single/summary.json" device_memory_peak_bytes)
  echo "trainer: device memory peak $peak bytes ($(field "$tmp/runs/single/summary.json" device_memory))"
  above "$peak" 10000 || fail "trainer: peak $peak"
  if grep -q "no usable GPU" "$tmp/single.out"; then
    grep -q "compute.gpu-memory = fraction:0.5 applies to GPUs only" "$tmp/single.out" || fail "trainer: the fallback line does not name the fraction"
  fi
  grep -q "device memory: peak" "$tmp/single.out" || fail "trainer: no memory line"
else
  fail "the trainer failed:"; tail -5 "$tmp/single.out"
fi

echo "== 3: refused by name"
out=$("$bin/actorps-train" "${common[@]}" '--compute.devices=["gpu:0", "npu:1"]' 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *'"npu:1" is not a device'* ]] || fail "bad device: exit $rc: $out"
out=$("$bin/actorps-train" "${common[@]}" --compute.gpu-memory='"all"' 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *'compute.gpu-memory must be grow or fraction:F'*'got "all"'* ]] || fail "bad gpu-memory: exit $rc: $out"
if cluster --ps 1 --workers 1 --name absent --deadline 60 -- "${common[@]}" '--compute.devices=["cpu:0", "gpu:7"]' \
     > "$tmp/absent.out" 2>&1; then
  fail "a tower on gpu:7 was not refused"
else
  grep -q 'compute.devices\[1\] "gpu:7": ' "$tmp/runs/absent/logs/worker-0.log" \
    || { fail "a tower on gpu:7: no message naming it"; tail -3 "$tmp/runs/absent/logs/worker-0.log"; }
fi
if cluster --mode model-parallel --ps 1 --workers 2 --name sliced --deadline 60 -- "${common[@]}" --train.slices=2 \
     '--compute.devices=["cpu:0", "cpu:1"]' > "$tmp/sliced.out" 2>&1; then
  fail "towers on model-parallel workers were not refused"
else
  grep -q "model-parallel workers take one device each" "$tmp/sliced.out" "$tmp/runs/sliced/logs/"*.log \
    || { fail "towers on model-parallel workers: no message naming them"; tail -5 "$tmp/sliced.out"; }
fi
finish
