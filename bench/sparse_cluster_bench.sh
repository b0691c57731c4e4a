#!/usr/bin/env bash
# The text-hash model on the ps nodes (issue 51's cluster rows), on the SpamAssassin corpus
# (scripts/fetch-spam.sh), side by side in one run:
#  1. speed: async clusters of 1 ps x 2 workers, 4 ps x 2 workers, 1 ps x 3 workers (on 2
#     cores: more workers than cores hide each one's wait for its exchange) and 1 ps x 2 workers
#     with overlapped steps (cluster.overlap-steps: each worker's next step computes while its
#     exchange travels) against one process
#     (actorps-train), a 2^20 x 32 table, EPOCHS epochs, ROUNDS interleaved rounds (seeds 1, 2,
#     ...): each one's examples/s and test accuracy, and the cluster / one-process ratio; with
#     the default evaluation (every epoch: the chief pulls the rows its evaluation sets name) and with
#     one every 5 epochs, the same for both sides;
#  2. the wire and the memory: 4 ps x 2 workers, one epoch, tables of 2^20 and 2^26 rows x 16
#     (4 GiB): tensor bytes each way per worker step (summary.json) and every node's peak RSS
#     (VmHWM, read every 0.2 s while the cluster runs); 2^26 again with the kept models saved
#     (train.save-model = both: the chief writes the table as it reads it a chunk at a time);
#  3. the rows asked back with the pushes (cluster.rows-with-push, the default) against the rows
#     pulled before each step, in async, sync (read once each step is applied) and ssp: 1 ps
#     x 2 workers, 2^20 x 32, 6 x EPOCHS epochs evaluated every 2 x EPOCHS, ROUNDS interleaved
#     rounds.
# Usage: [SECTIONS=123] bench/sparse_cluster_bench.sh [ROUNDS=2] [EPOCHS=10]   (after
# scripts/build.sh; section 2 needs about 10 GB of memory, each ps node holding its part and
# Adagrad's accumulator, and 4 GB of disk for the kept model)
set -euo pipefail
cd "$(dirname "$0")/.."
sections=${SECTIONS:-123}
rounds=${1:-2}
epochs=${2:-10}
bin=build/bin
corpus=$(scripts/fetch-spam.sh)
tmp=$(mktemp -d)
watcher=""
trap '[[ -n "$watcher" ]] && kill "$watcher" 2>/dev/null; rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
text=(--data.dir="\"$corpus\"" --data.format='"text"' --model.preset='"text-hash"' --train.save-model='"none"')
layers() { echo "--model.layers=[\"embedding $1 $2 mean\", \"dense 64 relu\", \"dense 2\"]"; }
cluster() { # cluster NAME PS [options]: a local cluster (async unless the options say) of PS ps nodes and WORKERS (2) workers
  local name=$1 ps=$2
  shift 2
  scripts/local-cluster.sh --run-dir "$tmp/runs" --bin "$bin" --ps "$ps" --workers "${WORKERS:-2}" --name "$name" --deadline 900 \
    -- "${text[@]}" "$@" > "$tmp/$name.out" 2>&1 || { echo "cluster $name failed:"; tail -5 "$tmp/$name.out"; exit 1; }
}
# watch NAME: records each node's VmHWM (kB) in $tmp/NAME.rss while the run lives
watch() {
  (while true; do
     if [[ -f "$tmp/runs/$1/pids" ]]; then
       while read -r node pid; do
         h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null) || true
         [[ -n "$h" ]] && echo "$node $h" >> "$tmp/$1.rss"
       done < "$tmp/runs/$1/pids"
     fi
     sleep 0.2
   done) &
  watcher=$!
}
unwatch() { kill "$watcher" 2>/dev/null || true; watcher=""; }
peaks() { sort -k1,1 -k2,2n "$tmp/$1.rss" | awk '{p[$1] = $2} END {for (n in p) printf "%s=%d ", n, p[n] / 1024}' | tr ' ' '\n' | sort | tr '\n' ' '; }

echo "corpus $corpus; batch 50, Adagrad lr 0.5 (async: / the workers), 1 thread per process, $(nproc) cores"
cell() { printf '%.4f / %.0f' "$(field "$tmp/runs/$1/summary.json" test_accuracy)" "$(field "$tmp/runs/$1/summary.json" examples_per_second)"; }
for evals in 1 5; do
[[ $sections == *1* ]] || break
echo "== 1: async clusters against one process, 2^20 x 32 table, $epochs epochs, evaluated every $evals epoch(s)"
printf "%-5s %-18s %-18s %-18s %-18s %-18s %s\n" round "one process" "1 ps x 2 workers" "4 ps x 2 workers" \
  "1 ps x 3 workers" "1 x 2 overlapped" "ratios (1x2, 4x2, 1x3, 1x2 overlapped)"
for round in $(seq 1 "$rounds"); do
  every=(--train.eval-every-epochs="$evals" --train.max-epochs="$epochs" --train.seed="$round")
  "$bin/actorps-train" --train.run-dir="$tmp/runs" --train.name="one-$evals-$round" "${text[@]}" "$(layers 20 32)" \
    "${every[@]}" > "$tmp/one.out" 2>&1
  cluster "c1-$evals-$round" 1 "$(layers 20 32)" "${every[@]}"
  cluster "c4-$evals-$round" 4 "$(layers 20 32)" "${every[@]}"
  WORKERS=3 cluster "c13-$evals-$round" 1 "$(layers 20 32)" "${every[@]}"
  cluster "o12-$evals-$round" 1 "$(layers 20 32)" "${every[@]}" --cluster.overlap-steps=1
  e1=$(field "$tmp/runs/one-$evals-$round/summary.json" examples_per_second)
  ec1=$(field "$tmp/runs/c1-$evals-$round/summary.json" examples_per_second)
  ec4=$(field "$tmp/runs/c4-$evals-$round/summary.json" examples_per_second)
  ec13=$(field "$tmp/runs/c13-$evals-$round/summary.json" examples_per_second)
  eo12=$(field "$tmp/runs/o12-$evals-$round/summary.json" examples_per_second)
  printf "%-5s %-18s %-18s %-18s %-18s %-18s %s\n" "$round" "$(cell "one-$evals-$round")" "$(cell "c1-$evals-$round")" \
    "$(cell "c4-$evals-$round")" "$(cell "c13-$evals-$round")" "$(cell "o12-$evals-$round")" \
    "$(python3 -c "print(f'{$ec1 / $e1:.2f}x, {$ec4 / $e1:.2f}x, {$ec13 / $e1:.2f}x, {$eo12 / $e1:.2f}x')")"
done
done

if [[ $sections == *2* ]]; then
echo "== 2: bytes on the wire per worker step and peak RSS (MiB), 4 ps x 2 workers, one epoch"
printf "%-24s %-28s %s\n" table "sent / received bytes/step" "peak RSS MiB"
for run in 20 26 26-saved; do
  bits=${run%%-*}
  saving=()
  [[ $run == *saved ]] && saving=(--train.save-model='"both"')
  watch "w$run"
  cluster "w$run" 4 "$(layers "$bits" 16)" --train.max-epochs=1 "${saving[@]}"
  unwatch
  s="$tmp/runs/w$run/summary.json"
  printf "%-24s %-28s %s\n" "2^$bits x 16${saving:+, models saved}" "$(field "$s" sent_bytes_per_step) / $(field "$s" received_bytes_per_step)" "$(peaks "w$run")"
  [[ -n "${saving[*]}" ]] && echo "   $(grep -h "final model saved" "$tmp/runs/w$run/logs/chief.log" | tail -1)"
done
fi

[[ $sections == *3* ]] || exit 0
echo "== 3: rows asked back with the pushes against rows pulled before each step, 1 ps x 2 workers, 2^20 x 32, $((6 * epochs)) epochs evaluated every $((2 * epochs))"
printf "%-6s %-5s %-20s %-20s %s\n" mode round "asked back" "pulled" "asked back / pulled"
for round in $(seq 1 "$rounds"); do
  for mode in async sync ssp; do
    every=(--train.eval-every-epochs="$((2 * epochs))" --train.max-epochs="$((6 * epochs))" --train.seed="$round"
           --train.mode="\"$mode\"")
    cluster "ab-$mode-$round" 1 "$(layers 20 32)" "${every[@]}"
    cluster "pl-$mode-$round" 1 "$(layers 20 32)" "${every[@]}" --cluster.rows-with-push=false
    ea=$(field "$tmp/runs/ab-$mode-$round/summary.json" examples_per_second)
    ep=$(field "$tmp/runs/pl-$mode-$round/summary.json" examples_per_second)
    printf "%-6s %-5s %-20s %-20s %s\n" "$mode" "$round" "$(cell "ab-$mode-$round")" "$(cell "pl-$mode-$round")" \
      "$(python3 -c "print(f'{$ea / $ep:.2f}x')")"
  done
done
