#!/usr/bin/env bash
# What watching a run costs (issue 35): examples/s with TensorBoard event files, the /metrics
# endpoints (scraped every second here, as a busy Prometheus would) and the stall watch on, against
# all of them off (train.tensorboard = false, no metrics port, cluster.stall-warn = 0s), side by
# side in ROUNDS interleaved rounds: the reference MLP and the cnn preset, the single-process
# trainer and an async cluster (1 shard, 2 workers), the same steps each. Prints each pair's ratio
# and the median over the rounds (goal: at least 0.98x).
# Usage: bench/observe_bench.sh [ROUNDS=3] [MLP_STEPS=6000] [CNN_STEPS=600] [DATA_DIR]
#        (after scripts/build.sh; ACTORPS_BIN names another folder of binaries, ACTORPS_DEVICE=gpu
#        trains on the GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
mlp_steps=${2:-6000}
cnn_steps=${3:-600}
data=${4:-/usr/share/datasets/fashion-mnist}
bin=$(realpath "${ACTORPS_BIN:-build/bin}")
device=${ACTORPS_DEVICE:-cpu} # (gpu: the workers and the trainer on the GPU)
tmp=$(mktemp -d)
scraper=""
trap '[[ -n "$scraper" ]] && kill "$scraper" 2> /dev/null; rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# scrape RUN_DIR: GETs every port in RUN_DIR/metrics-ports once a second until killed
scrape() {
  python3 - "$1" <<'PY' &
import os, sys, time, urllib.request
ports_file = os.path.join(sys.argv[1], "metrics-ports")
while True:
    if os.path.exists(ports_file):
        for line in open(ports_file):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{line.split()[1]}/metrics", timeout=2).read()
            except Exception:
                pass
    time.sleep(1)
PY
  scraper=$!
}

# one RUN MODEL SETTING: examples/s of one run (single or cluster) with watching on or off
one() {
  local run=$1 model=$2 setting=$3 name="$1-$2-$3-$4" steps=$mlp_steps
  [[ $model == cnn ]] && steps=$cnn_steps
  local common=(--model.preset="\"$model\"" --data.dir="\"$data\"" --train.max-steps="$steps" --train.max-epochs=0
                --train.eval-every-epochs=0 --train.patience=0 --train.progress-every=100 --compute.device="$device")
  local watch=(--train.tensorboard=false --cluster.stall-warn=0s) metrics=()
  [[ $setting == on ]] && watch=(--train.tensorboard=true --cluster.stall-warn=10s) && metrics=(--metrics)
  if [[ $run == single ]]; then
    "$bin/actorps-train" "${common[@]}" --train.tensorboard="$([[ $setting == on ]] && echo true || echo false)" \
      --train.run-dir="\"$tmp\"" --train.name="\"$name\"" > "$tmp/$name.log" 2>&1
  else
    [[ $setting == on ]] && scrape "$tmp/$name"
    scripts/local-cluster.sh --bin "$bin" "${metrics[@]}" --ps 1 --workers 2 --name "$name" --run-dir "$tmp" -- \
      "${common[@]}" "${watch[@]}" > "$tmp/$name.log" 2>&1
    [[ -n "$scraper" ]] && kill "$scraper" 2> /dev/null && wait "$scraper" 2> /dev/null || true
    scraper=""
  fi
  field "$tmp/$name/summary.json" examples_per_second
}

echo "round  run      model      off examples/s  on examples/s   on/off"
: > "$tmp/ratios"
for ((r = 1; r <= rounds; r++)); do
  for run in single cluster; do
    for model in reference cnn; do
      # (interleaved: which setting goes first alternates by round)
      if ((r % 2)); then off=$(one "$run" "$model" off "$r"); on=$(one "$run" "$model" on "$r")
      else on=$(one "$run" "$model" on "$r"); off=$(one "$run" "$model" off "$r"); fi
      ratio=$(python3 -c "import sys; print(f'{float(sys.argv[2]) / float(sys.argv[1]):.3f}')" "$off" "$on")
      printf '%-6s %-8s %-10s %14.0f %14.0f %8s\n' "$r" "$run" "$model" "$off" "$on" "$ratio"
      echo "$run $model $ratio" >> "$tmp/ratios"
    done
  done
done
echo "== medians of on/off over $rounds rounds (goal >= 0.98x)"
python3 - "$tmp/ratios" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    run, model, ratio = line.split()
    by.setdefault((run, model), []).append(float(ratio))
for (run, model), v in by.items():
    print(f"  {run:8} {model:10} {statistics.median(v):.3f}x  (rounds: {', '.join(f'{x:.3f}' for x in v)})")
PY
