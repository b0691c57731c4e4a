#!/usr/bin/env bash
# Faults that the cluster survives, on 127.0.0.1:
#  1. kill -9 the chief mid-run and start it again with the same config: it restores its position
#     from the last checkpoint, finds the shards initialised and keeps their values, the workers
#     pause, reconnect, register again and finish the run.
# (kill -9 of a worker is in sync_test.sh and tls_test.sh.)
# Usage: fault_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: kill -9 the chief, restart it"
opts=(--train.max-steps=2500 --checkpoint.dir="$tmp/ckpts" --checkpoint.every-steps=300)
cluster --ps 2 --workers 2 --name chief --deadline 180 --tolerate chief -- "${opts[@]}" > "$tmp/chief.out" 2>&1 &
cpid=$!
for _ in $(seq 1 300); do
  grep -q "checkpoint saved" "$tmp/runs/chief/logs/chief.log" 2>/dev/null && break
  sleep 0.1
done
victim=$(awk '$1 == "chief" {print $2}' "$tmp/runs/chief/pids")
if grep -q "checkpoint saved" "$tmp/runs/chief/logs/chief.log" && kill -9 "$victim"; then
  echo "killed the chief (pid $victim) after $(grep -c 'checkpoint saved' "$tmp/runs/chief/logs/chief.log") checkpoint(s)"
  sleep 1
  "$bin/actorps-node" --config-file="$tmp/runs/chief/cluster.ini" --node.role=chief "${opts[@]}" > "$tmp/chief2.log" 2>&1
  rc2=$?
  [[ $rc2 -eq 0 ]] || { fail "the restarted chief exited $rc2:"; tail -5 "$tmp/chief2.log"; }
else
  fail "no checkpoint before the kill"
fi
if wait "$cpid"; then
  summary=$tmp/runs/chief/summary.json
  resumed=$(field "$summary" resumed_from_step)
  echo "resumed from step $resumed; finished at step $(field "$summary" steps), test accuracy $(field "$summary" test_accuracy)"
  above "$resumed" 0 || fail "the restarted chief did not restore a checkpoint"
  [[ $(grep -c "was already initialised" "$tmp/chief2.log") -eq 2 ]] || fail "the restarted chief re-initialised a shard"
  for w in 0 1; do
    grep -q "registering again" "$tmp/runs/chief/logs/worker-$w.log" || fail "worker $w did not re-register"
  done
  [[ "$(field "$summary" workers_lost)" == "0" ]] || fail "workers were lost"
else
  fail "the cluster failed after the chief's restart:"; tail -10 "$tmp/chief.out"
fi

finish
