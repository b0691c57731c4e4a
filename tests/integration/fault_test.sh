#!/usr/bin/env bash
# scripts/fault-drill.sh once per case on a local async cluster with checkpoints: kill -9 a worker,
# a shard, the chief at a random moment, restart it, and the run must finish by itself (the
# restarted shard restored from the last checkpoint, the restarted chief keeping the shards'
# values while the workers pause, reconnect and register again).
# Then the shard and chief cases once more in sync mode (the restarted aggregator resumes at the
# other shards' step).
# Usage: fault_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

"$root/scripts/fault-drill.sh" --trials 1 --steps 2500 --target 0.75 --run-dir "$tmp" --bin "$bin" > "$tmp/drill.out" 2>&1 \
  || { fail "fault-drill.sh failed:"; tail -20 "$tmp/drill.out"; }
grep "^|" "$tmp/drill.out"
for c in worker shard chief; do
  row=$(grep "^| kill -9 $c |" "$tmp/drill.out")
  [[ "$row" == "| kill -9 $c | 1 | 1 | 1 |"* ]] || fail "$c: did not resume and reach 0.75 by itself: $row"
done
dir=$(ls -d "$tmp"/fault-drill-* | head -1)
grep -q "was already initialised" "$dir/chief-1/logs/chief-restarted.log" || fail "the restarted chief re-initialised the shards"
grep -q "reconnected to shard 1" "$dir/shard-1/logs/worker-0.log" || fail "worker 0 did not reconnect to the restarted shard"
grep -q "registering again" "$dir/chief-1/logs/worker-0.log" || fail "worker 0 did not register with the restarted chief"

echo "== sync mode: a shard and the chief"
mkdir -p "$tmp/sync"
"$root/scripts/fault-drill.sh" --trials 1 --steps 1500 --target 0.75 --cases "shard chief" --run-dir "$tmp/sync" --bin "$bin" \
  -- --train.mode=sync > "$tmp/sync.out" 2>&1 || { fail "fault-drill.sh (sync) failed:"; tail -20 "$tmp/sync.out"; }
grep "^| kill" "$tmp/sync.out"
for c in shard chief; do
  row=$(grep "^| kill -9 $c |" "$tmp/sync.out")
  [[ "$row" == "| kill -9 $c | 1 | 1 | 1 |"* ]] || fail "sync $c: did not resume and reach 0.75 by itself: $row"
done
dir=$(ls -d "$tmp"/sync/fault-drill-* | head -1)
grep -q "resuming at step" "$dir/shard-1/logs/ps-1-restarted.log" || fail "the restarted sync shard did not resume at the cluster's step"
finish
