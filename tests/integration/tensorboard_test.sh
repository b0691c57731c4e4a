#!/usr/bin/env bash
# TensorBoard event files and the stall report (issue 35), read by the suite's own reader
# (read_tfevents.py: its own CRC-32C, python3-protobuf with TensorFlow's field numbers):
#  1. the single-process trainer: every record's CRCs hold, and the evaluation scalars equal
#     metrics.jsonl's rows step by step;
#  2. a local cluster (async, 2 shards, 2 workers): a folder per node, each with the scalars of its
#     role; the chief's evaluations equal metrics.jsonl's rows;
#  3. kill -9 of a worker while it trains: its file still reads whole, and its restart writes a
#     second file beside the first;
#  4. a frozen worker (kill -STOP) in sync mode: within the stall interval (2 s here) the chief
#     logs the stall line naming it; after kill -CONT the run ends and summary.json counts stalls;
#  5. a frozen shard in async mode: the stall line names that shard first.
# Usage: tensorboard_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
reader=$root/tests/integration/read_tfevents.py

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
opts=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.max-epochs=0 --train.patience=0)

# matches RUN_DIR NODE: the node's evaluation scalars equal the run's metrics.jsonl rows
matches() {
  "$py" "$reader" "$1/tensorboard/$2" > "$tmp/events.jsonl" || { fail "$2: the event files do not read"; return; }
  "$py" - "$1/metrics.jsonl" "$tmp/events.jsonl" <<'PY' || fail "$2: TensorBoard's scalars differ from metrics.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"validation_loss"' in l]
events = {}
for l in open(sys.argv[2]):
    e = json.loads(l)
    for tag, v in e.get("scalars", {}).items():
        events.setdefault(e["step"], {})[tag] = v
assert rows, "no evaluation rows"
for r in rows:
    got = events.get(r["step"], {})
    for field, tag in (("validation_loss", "validation/loss"), ("validation_accuracy", "validation/accuracy"),
                       ("test_loss", "test/loss"), ("test_accuracy", "test/accuracy")):
        assert tag in got, f"step {r['step']}: no {tag}"
        assert abs(got[tag] - r[field]) <= 1e-5 * max(1.0, abs(r[field])), f"step {r['step']}: {tag} {got[tag]} vs {r[field]}"
print(f"{len(rows)} evaluations match")
PY
}

echo "== 1. the single-process trainer"
"$bin/actorps-train" "${opts[@]}" --train.max-steps=600 --train.eval-every=200 --train.eval-every-epochs=0 --train.run-dir="$tmp/runs" \
  --train.name=single > "$tmp/single.log" 2>&1 || { fail "the trainer failed"; tail -5 "$tmp/single.log"; }
matches "$tmp/runs/single" trainer
"$py" "$reader" "$tmp/runs/single/tensorboard" > "$tmp/single.jsonl"
grep -q '"texts": {"config"' "$tmp/single.jsonl" || fail "trainer: no configuration text"

echo "== 2. a local cluster"
cluster --ps 2 --workers 2 --name async --deadline 120 -- "${opts[@]}" --train.max-steps=2000 --train.eval-every=500 \
  --train.eval-every-epochs=0 --cluster.report-every=20 > "$tmp/async.out" 2>&1 || { fail "the async cluster failed"; tail -20 "$tmp/async.out"; }
matches "$tmp/runs/async" chief
for node_tags in "chief global_step/sec" "chief lag" "ps-0 shard/updates_per_sec" "ps-1 shard/bytes_in_per_sec" \
                 "worker-0 step/compute_ms" "worker-1 step/wait_for_pull_ms" "worker-1 train/loss"; do
  set -- $node_tags
  "$py" "$reader" "$tmp/runs/async/tensorboard/$1" > "$tmp/node.jsonl"
  grep -q "\"$2\"" "$tmp/node.jsonl" || fail "$1: no $2"
done
# (issue 50, item 8) a worker's charts end at its last steps, not with a point at 0; the config
# text shows the learning rate the async shards apply (0.01 / 2 workers)
"$py" "$reader" "$tmp/runs/async/tensorboard/worker-0" > "$tmp/worker0.jsonl"
"$py" - "$tmp/worker0.jsonl" <<'PY' || fail "worker-0's charts end with a point at 0"
import json, sys
last = [json.loads(l)["scalars"] for l in open(sys.argv[1]) if '"step/compute_ms"' in l][-1]
assert last["step/compute_ms"] > 0 and last.get("examples/sec", 1) > 0, last
PY
"$py" "$reader" "$tmp/runs/async/tensorboard/chief" | grep -q 'applied by the shards | momentum, learning rate 0.005' \
  || fail "chief: the config text does not show the learning rate the shards apply"

echo "== 3. kill -9 of a worker, then its restart"
timed=(--train.max-steps=0 --train.max-seconds=6 --train.eval-every-epochs=0 --cluster.report-every=10)
cluster --ps 1 --workers 2 --name killed --deadline 120 --tolerate worker-1 -- "${opts[@]}" "${timed[@]}" \
  > "$tmp/killed.out" 2>&1 &
launcher=$!
restart_killed_worker killed 1 "$tmp/restarted.log" "${opts[@]}" "${timed[@]}"
wait "$launcher" # (worker-1 was killed: the launcher may count it as failed; the run's summary decides)
[[ -n "$restarted" ]] && wait "$restarted"
files=$(ls "$tmp/runs/killed/tensorboard/worker-1" | wc -l)
echo "worker-1's event files: $files"
[[ $files -eq 2 ]] || fail "the restarted worker did not write a second file beside the first ($files files)"
"$py" "$reader" "$tmp/runs/killed/tensorboard/worker-1" > /dev/null || fail "the killed worker's files do not read whole"
[[ -f "$tmp/runs/killed/summary.json" ]] || { fail "the run with a restarted worker did not finish"; tail -20 "$tmp/killed.out"; }

echo "== 4. a frozen worker in sync mode"
cluster --mode sync --ps 1 --workers 3 --name frozen --deadline 120 -- "${opts[@]}" --train.max-steps=40000 --train.eval-every-epochs=0 \
  --cluster.stall-warn=2s --cluster.step-timeout=60s > "$tmp/frozen.out" 2>&1 &
launcher=$!
victim=$(signal_when_training STOP 1 frozen worker-2)
[[ -n "$victim" ]] || fail "frozen: training never started"
stopped_at=$SECONDS
line=""
for _ in $(seq 1 100); do # (10 s: the interval is 2 s)
  line=$(grep -m1 "stall: no global step" "$tmp/runs/frozen/logs/chief.log")
  [[ -n "$line" ]] && break
  sleep 0.1
done
echo "after $((SECONDS - stopped_at)) s: $line"
[[ "$line" == *"waiting for worker 2 "* ]] || fail "no stall line naming worker 2 within 10 s"
[[ "$line" == *"worker 0"* || "$line" == *"worker 1"* ]] && fail "the stall line names a worker that was not frozen"
[[ -n "$victim" ]] && kill -CONT "$victim"
sleep 1 && end_run frozen # (its 40,000 steps only outlast the probe)
wait "$launcher" || { fail "the sync cluster failed after the freeze"; tail -20 "$tmp/frozen.out"; }
stalls=$(field "$tmp/runs/frozen/summary.json" stalls 2>/dev/null)
echo "stalls in summary.json: $stalls; stragglers: $(field "$tmp/runs/frozen/summary.json" stragglers 2>/dev/null)"
above "${stalls:-0}" 0 || fail "summary.json counts no stall"
"$py" "$reader" "$tmp/runs/frozen/tensorboard/chief" > "$tmp/frozen.jsonl"
grep -q '"stragglers/worker_2"' "$tmp/frozen.jsonl" || fail "chief: no straggler counts"

echo "== 5. a frozen shard in async mode"
cluster --ps 2 --workers 2 --name frozen-ps --deadline 120 -- "${opts[@]}" --train.max-steps=40000 \
  --train.eval-every-epochs=0 --cluster.stall-warn=2s --cluster.request-timeout=120s > "$tmp/frozen-ps.out" 2>&1 &
launcher=$!
victim=$(signal_when_training STOP 1 frozen-ps ps-1)
[[ -n "$victim" ]] || fail "frozen-ps: training never started"
line=""
for _ in $(seq 1 100); do
  line=$(grep -m1 "stall: no global step" "$tmp/runs/frozen-ps/logs/chief.log")
  [[ -n "$line" ]] && break
  sleep 0.1
done
echo "$line"
[[ "$line" == *"; waiting for shard 1 "*"(no answer within 2.0 s"* ]] || fail "no stall line naming shard 1 first within 10 s"
[[ "$line" == *"shard 0"* ]] && fail "the stall line names shard 0, which was not frozen"
[[ -n "$victim" ]] && kill -CONT "$victim"
sleep 1 && end_run frozen-ps
wait "$launcher" || { fail "the async cluster failed after the shard's freeze"; tail -20 "$tmp/frozen-ps.out"; }

finish
