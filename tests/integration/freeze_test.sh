#!/usr/bin/env bash
# Frozen nodes (SIGSTOP, as a Slurm suspend sends) on 127.0.0.1:
#  1. a frozen worker (issue 32, item 6): sync, 3 workers, 2 aggregated, one worker stopped for
#     longer than cluster.request-timeout. The others finish at exactly max-steps, the chief ends
#     the run within request-timeout of their final reports instead of waiting for the frozen one,
#     and the frozen worker, woken after the end, quits cleanly: every node exits 0. It is woken
#     once the ps node has exited: it then reads its requests fail as the stream closes, the
#     shard's normal exit and the chief's in whatever order its connections deliver them (CI saw
#     it take the closed stream for a lost shard and set out to reach it again);
#  2. a frozen ps node: async, 2 workers, the ps stopped for 2.5 request timeouts, then woken.
#     The workers' exchanges fail at their deadline and they set out to reach the shard again;
#     the process that answers is the same one, back (not a restart): they go on with it, and
#     the run ends at max-steps with every node exiting 0 (they had waited for a new process
#     until cluster.connect-timeout, and the run failed). The woken shard applies the pushes it
#     had been sent before the freeze, which their workers gave up on and push again: up to a
#     step per worker beyond max-steps, as after a worker's restart.
# Usage: freeze_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
echo "== 1: a frozen worker (sync)"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
opts=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.max-epochs=0 --train.patience=0
      --train.max-steps=3000 --train.replicas-to-aggregate=2 --cluster.request-timeout=3s --cluster.step-timeout=2s)
cluster --mode sync --ps 1 --workers 3 --name frozen --deadline 120 -- "${opts[@]}" > "$tmp/frozen.out" 2>&1 &
launcher=$!
pid=$(signal_when_training STOP 0.5 frozen worker-2)
[[ -n "$pid" ]] && echo "froze worker-2 (pid $pid)" || fail "training never started"
for _ in $(seq 1 300); do [[ -f "$tmp/runs/frozen/summary.json" ]] && break; sleep 0.1; done
[[ -f "$tmp/runs/frozen/summary.json" ]] || fail "the chief did not finish while worker 2 was frozen"
ps=$(awk '$1 == "ps-0" {print $2}' "$tmp/runs/frozen/pids")
for _ in $(seq 1 100); do kill -0 "$ps" 2>/dev/null || break; sleep 0.1; done
kill -0 "$ps" 2>/dev/null && fail "the ps node did not exit while worker 2 was frozen"
kill -CONT "$pid"
wait "$launcher" || { fail "a node failed:"; tail -8 "$tmp/frozen.out"; }
steps=$(field "$tmp/runs/frozen/summary.json" steps)
global=$(field "$tmp/runs/frozen/summary.json" global_step)
echo "steps $steps, global step $global; worker 2: $(tail -1 "$tmp/runs/frozen/logs/worker-2.log")"
[[ "$steps" == 3000 && "$global" == 3000 ]] || fail "steps $steps, global step $global, expected 3000"
grep -q "not every worker sent its final report in time" "$tmp/runs/frozen/logs/chief.log" \
  || fail "the chief did not finish without the frozen worker"
if grep -q "is gone" "$tmp/runs/frozen/logs/worker-2.log"; then
  fail "the woken worker took a shard for gone:"; tail -5 "$tmp/runs/frozen/logs/worker-2.log"
fi

echo "== 2: a frozen ps node (async), woken after 2.5 request timeouts"
cluster --ps 1 --workers 2 --name frozen-ps --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] \
  --model.classes=4 --train.max-epochs=0 --train.patience=0 --train.max-steps=20000 --cluster.request-timeout=3s \
  --cluster.connect-timeout=20s > "$tmp/frozen-ps.out" 2>&1 &
launcher=$!
pid=$(signal_when_training STOP 0.5 frozen-ps ps-0)
[[ -n "$pid" ]] && echo "froze ps-0 (pid $pid)" || fail "frozen-ps: training never started"
sleep 7.5
[[ -n "$pid" ]] && kill -CONT "$pid" && echo "woke ps-0"
wait "$launcher" || { fail "a node failed after the ps node woke:"; tail -8 "$tmp/frozen-ps.out"; }
global=$(field "$tmp/runs/frozen-ps/summary.json" global_step 2>/dev/null)
echo "global step $global"
[[ "$global" =~ ^[0-9]+$ ]] && (( global >= 20000 && global <= 20002 )) \
  || fail "frozen-ps: global step '$global', expected 20000 (up to a step per worker more)"
for j in 0 1; do
  log=$tmp/runs/frozen-ps/logs/worker-$j.log
  grep -q "no answer within cluster.request-timeout" "$log" || grep -q "shard 0 is gone" "$log" \
    || fail "worker $j: its exchanges did not fail at their deadline while the ps node was frozen"
  grep -q "shard 0 answers again as the same process" "$log" \
    || { fail "worker $j did not go on with the woken ps node:"; tail -4 "$log"; }
done
finish
