#!/usr/bin/env bash
# A frozen worker (SIGSTOP) on 127.0.0.1 (issue 32, item 6): sync, 3 workers, 2 aggregated, one
# worker stopped for longer than cluster.request-timeout. The others finish at exactly max-steps,
# the chief ends the run within request-timeout of their final reports instead of waiting for the
# frozen one, and the frozen worker, woken after the end, quits cleanly: every node exits 0.
# It is woken once the ps node has exited: it then reads its requests fail as the stream closes,
# the shard's normal exit and the chief's in whatever order its connections deliver them (CI saw
# it take the closed stream for a lost shard and set out to reach it again).
# Usage: freeze_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

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
finish
