#!/usr/bin/env bash
# Integration: in-graph replication (train.replication = in-graph) with real processes on 127.0.0.1.
#  1. the chief drives a Fashion-MNIST cluster (2 shards, 2 workers) to a trained model, the
#     workers computing the parts of its global batches;
#  2. (IN_GRAPH_FAULTS=1) kill -9 one worker of three mid-run: its parts go to the others, the
#     restarted worker rejoins, and the run ends with the same weights as a run nobody disturbed
#     (seeded); ctest leaves it to the simulator's in-graph sweep and
#     in_graph_steps_survive_frozen_killed_and_cut_off_workers (docs/architecture.md);
#  3. in-graph with train.mode async is refused by name.
# Usage: [IN_GRAPH_FAULTS=1] in_graph_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
in_graph=(--train.replication='"in-graph"')

echo "== 1: in-graph on Fashion-MNIST, 2 shards x 2 workers, 300 steps"
if cluster --mode sync --ps 2 --workers 2 --name fashion --deadline 300 -- "${in_graph[@]}" --train.max-steps=300 \
     > "$tmp/fashion.out" 2>&1; then
  s=$tmp/runs/fashion/summary.json
  acc=$(field "$s" test_accuracy)
  echo "test accuracy $acc, steps $(field "$s" steps), epochs $(field "$s" epochs), replication $(field "$s" replication)"
  above "$acc" 0.7 || fail "accuracy $acc is not > 0.7"
  [[ "$(field "$s" replication)" == "in-graph" && "$(field "$s" steps)" == "300" ]] || fail "not 300 in-graph steps"
  for j in 0 1; do
    grep -q "stopped after computing [1-9][0-9]* in-graph parts" "$tmp/runs/fashion/logs/worker-$j.log" \
      || fail "worker $j computed no in-graph parts"
  done
else
  fail "the in-graph cluster failed:"; tail -20 "$tmp/fashion.out"
fi

if [[ ${IN_GRAPH_FAULTS:-0} == 1 ]]; then
echo "== 2: kill -9 one worker of three mid-run; the weights are those of an undisturbed run"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
small=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.1 --train.seed=7
       "${in_graph[@]}" --train.max-steps=8000 --train.max-epochs=0 --train.patience=0)
cluster --mode sync --ps 2 --workers 3 --name calm --deadline 300 -- "${small[@]}" > "$tmp/calm.out" 2>&1 \
  || { fail "the undisturbed run failed"; tail -20 "$tmp/calm.out"; }
cluster --mode sync --ps 2 --workers 3 --name kill --deadline 300 --tolerate worker-2 -- "${small[@]}" \
  > "$tmp/kill.out" 2>&1 &
cpid=$!
restart_killed_worker kill 2 "$tmp/restarted.log" "${small[@]}"
wait "$cpid"; rc=$?
[[ -n "$restarted" ]] && { wait "$restarted" || fail "the restarted worker exited $?"; }
if [[ $rc -eq 0 ]]; then
  echo "workers lost: $(field "$tmp/runs/kill/summary.json" workers_lost)"
  [[ "$(field "$tmp/runs/kill/summary.json" workers_lost)" == "1" ]] || fail "the chief did not count the lost worker"
  grep -q "worker 2 at .* rejoined" "$tmp/runs/kill/logs/chief.log" || fail "the restarted worker did not rejoin"
  grep -q "stopped after computing [1-9][0-9]* in-graph parts" "$tmp/restarted.log" \
    || fail "the restarted worker computed no parts"
  same_weights calm kill "a run with a worker killed and restarted"
else
  fail "the run with a killed worker failed:"; tail -20 "$tmp/kill.out"
fi
fi

echo "== 3: in-graph needs train.mode sync"
if "$bin/actorps-node" --node.role='"local"' "${in_graph[@]}" > "$tmp/async.out" 2>&1; then
  fail "in-graph with train.mode async was accepted"
else
  grep -q "train.replication.*needs train.mode = sync, not async" "$tmp/async.out" || { fail "no error naming train.replication"; cat "$tmp/async.out"; }
fi
finish
