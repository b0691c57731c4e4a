#!/usr/bin/env bash
# The text-hash model against its PyTorch twin (bench/torch_sparse.py: EmbeddingBag(sparse=True),
# the same dense head and Adagrad, one thread), side by side in one run on the SpamAssassin corpus
# (scripts/fetch-spam.sh): test accuracy after the same EPOCHS and training examples/s, for tables
# of 2^18 and 2^22 rows x 32, ROUNDS interleaved rounds with seeds 1, 2, ...; the ratio of each
# round's examples/s, and each side's peak RSS. actorps computes on one thread and prepares its
# batches ahead on another, where it also finds the rows each batch touches; its examples/s with
# everything on the one thread (data.prefetch-batches = 0) are in the last column.
# Usage: bench/sparse_bench.sh [ROUNDS=2] [EPOCHS=10]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
epochs=${2:-10}
bin=build/bin
corpus=$(scripts/fetch-spam.sh)
bench/install_torch.sh sparse_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
jfield() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
peak_mib() { awk '/Maximum resident set size/ {printf "%d", $NF / 1024}' "$1"; }
echo "corpus $corpus; $epochs epochs, batch 50, Adagrad lr 0.5, mean bags of up to 400 ids, 1 compute thread each"
printf "%-6s %-5s %-22s %-22s %-7s %-34s %s\n" table round "actorps acc / ex/s" "PyTorch acc / ex/s" ratio \
  "peak RSS MiB (actorps / PyTorch)" "actorps on one thread: ex/s, ratio"
# ours NAME [options]: actorps-train on the corpus (bits, round, epochs as set), timed (to stderr)
ours() {
  local name=$1
  shift
  /usr/bin/time -v "$bin/actorps-train" --train.run-dir="$tmp/runs" --train.name="$name" \
    --data.dir="\"$corpus\"" --data.format='"text"' --model.preset='"text-hash"' \
    --model.layers="[\"embedding $bits 32 mean\", \"dense 64 relu\", \"dense 2\"]" --train.max-epochs="$epochs" \
    --train.seed="$round" --train.save-model='"none"' "$@" > "$tmp/$name.out"
}
for bits in 18 22; do
  for round in $(seq 1 "$rounds"); do
    ours "b$bits-$round" 2> "$tmp/ours.time"
    s="$tmp/runs/b$bits-$round/summary.json"
    ours "o$bits-$round" --data.prefetch-batches=0 2> /dev/null
    oe=$(field "$tmp/runs/o$bits-$round/summary.json" examples_per_second)
    torch=$(/usr/bin/time -v /usr/bin/python3 bench/torch_sparse.py "$corpus" "$epochs" "$bits" 32 0.5 400 "$round" 2> "$tmp/torch.time")
    a=$(field "$s" test_accuracy) ae=$(field "$s" examples_per_second)
    b=$(jfield "$torch" test_accuracy) be=$(jfield "$torch" examples_per_second)
    printf "2^%-4s %-5s %-22s %-22s %-7s %-34s %.0f, %s\n" "$bits" "$round" "$(printf '%.4f / %.0f' "$a" "$ae")" \
      "$(printf '%.4f / %.0f' "$b" "$be")" "$(python3 -c "print(f'{$ae / $be:.2f}x')")" \
      "$(peak_mib "$tmp/ours.time") / $(peak_mib "$tmp/torch.time")" "$oe" "$(python3 -c "print(f'{$oe / $be:.2f}x')")"
  done
done
