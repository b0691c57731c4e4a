#!/usr/bin/env bash
# Fault drills on a local async cluster (1 chief, 2 shards, 3 workers, checkpoints every 300
# steps): for each case, kill -9 one node at a random moment of training, start it again, and
# see whether the run finishes by itself. The membership cases run the job elastic
# (cluster.elastic): "join" starts a fourth worker with node.join, "leave" sends worker 2 SIGTERM
# (time to recover: until the chief logs the join or the leave).
#
#   scripts/fault-drill.sh [--trials N] [--steps S] [--target ACC] [--cases "worker shard chief join leave"]
#                          [--run-dir DIR] [--bin DIR] [-- options for every node]
#
# Prints one row per case: trials, resumed unattended (the cluster exited 0), reached the target
# test accuracy, steps lost (global steps redone after restoring a checkpoint: shard = step at the
# kill - restored step; chief = shards' global step at the restart - restored step; worker = 0, no
# rollback) and time to recover (kill until the cluster trains again). Runs are kept under
# DIR/fault-drill-<time>/.
set -uo pipefail
cd "$(dirname "$0")/.."
caller=$OLDPWD
absolute() { [[ "$1" = /* ]] && echo "$1" || echo "$caller/$1"; }

trials=3 steps=4000 target=0.8 cases="worker shard chief" run_dir=runs bin=build/bin
while [[ $# -gt 0 ]]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --run-dir) run_dir=$(absolute "$2"); shift 2 ;;
    --bin) bin=$(absolute "$2"); shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "fault-drill: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=("$@")
out=$run_dir/fault-drill-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
now() { date +%s.%N; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2" 2>/dev/null; }
# wait_for FILE PATTERN SECONDS: succeeds once PATTERN is in FILE
wait_for() {
  local end=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [[ $SECONDS -ge $end ]] && return 1
    sleep 0.05
  done
}

declare -A ran ok hit lost took
for c in $cases; do ran[$c]=0 ok[$c]=0 hit[$c]=0 lost[$c]="" took[$c]=""; done

for ((t = 1; t <= trials; t++)); do
  for c in $cases; do
    case $c in
      worker) victim=worker-2 role=worker index=2 ;;
      shard) victim=ps-1 role=ps index=1 ;;
      chief) victim=chief role=chief index=0 ;;
      join|leave) victim=worker-2 role=worker index=2 ;;
      *) echo "fault-drill: unknown case '$c' (worker, shard, chief, join, leave)" >&2; exit 2 ;;
    esac
    name=$c-$t run=$out/$name
    opts=(--train.max-steps="$steps" --train.max-epochs=0 --train.patience=0 --train.progress-every=100
          --checkpoint.dir="$run/ckpts" --checkpoint.every-steps=300 "${extra[@]}")
    [[ $c == join || $c == leave ]] && opts+=(--cluster.elastic --cluster.max-workers=4)
    scripts/local-cluster.sh --ps 2 --workers 3 --name "$name" --run-dir "$out" --bin "$bin" --deadline 600 \
      --tolerate "$victim" -- "${opts[@]}" > "$out/$name.out" 2>&1 &
    cpid=$!
    ran[$c]=$((ran[$c] + 1))
    if ! wait_for "$run/logs/chief.log" "checkpoint saved" 120; then
      echo "fault-drill: $name: no checkpoint before the kill; see $out/$name.out" >&2
      wait "$cpid"
      continue
    fi
    # a random moment: a progress line between the first checkpoint's step and half the run (a
    # moment drawn in seconds fell after the end of short runs on a fast machine)
    at_step=$(python3 -c 'import random, sys; s = int(sys.argv[1]); print(random.randrange(400, max(500, s // 2 + 1), 100))' "$steps")
    wait_for "$run/logs/chief.log" "chief: step $at_step " 120 || true
    grep -q "chief: stopping: " "$run/logs/chief.log" \
      && echo "fault-drill: $name: training had ended before the kill (its first checkpoint came late); a longer run (--steps) tests the recovery" >&2
    pid=$(awk -v n="$victim" '$1 == n {print $2}' "$run/pids")
    rpid=""
    if [[ $c == join ]]; then
      killed=$(now)
      chief_at=$(sed -n 's/^chief = "\(.*\)"$/\1/p' "$run/cluster.ini")
      "$bin/actorps-node" --config-file="$run/cluster.ini" --node.role=worker --node.join="$chief_at" "${opts[@]}" \
        > "$run/logs/worker-joined.log" 2>&1 &
      rpid=$!
    elif [[ $c == leave ]]; then
      kill -TERM "$pid"
      killed=$(now)
    else
      kill -9 "$pid"
      killed=$(now)
      sleep 0.5
      "$bin/actorps-node" --config-file="$run/cluster.ini" --node.role="$role" --node.index="$index" "${opts[@]}" \
        > "$run/logs/$victim-restarted.log" 2>&1 &
      rpid=$!
    fi
    case $c in
      worker) mark=("$run/logs/chief.log" "worker 2 .* rejoined") ;;
      shard) mark=("$run/logs/chief.log" "shard 1 restored from") ;;
      chief) mark=("$run/logs/$victim-restarted.log" "workers registered; training") ;;
      join) mark=("$run/logs/chief.log" "worker 3 joined") ;;
      leave) mark=("$run/logs/chief.log" "worker 2 .* left") ;;
    esac
    if wait_for "${mark[0]}" "${mark[1]}" 120; then
      took[$c]+="$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$killed" "$(now)") "
    fi
    crc=0
    wait "$cpid" || crc=$?
    rrc=0
    [[ -z "$rpid" ]] || wait "$rpid" || rrc=$?
    summary=$run/summary.json
    if [[ $crc -eq 0 && $rrc -eq 0 && -f $summary ]]; then
      ok[$c]=$((ok[$c] + 1))
      acc=$(field "$summary" test_accuracy)
      python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$acc" "$target" \
        && hit[$c]=$((hit[$c] + 1))
    fi
    case $c in
      worker|join|leave) lost[$c]+="0 " ;;
      shard)
        restored=$(grep -o "shard 1 restored from .*(step [0-9]*)" "$run/logs/chief.log" | grep -o "(step [0-9]*" | grep -o "[0-9]*")
        at=$(sed -n '/shard 1 at .* went down/q;p' "$run/logs/chief.log" | grep -o "step [0-9]* epoch" | tail -1 | grep -o "[0-9]*")
        [[ -n "$restored" && -n "$at" ]] && lost[$c]+="$((at - restored)) " ;;
      chief)
        restored=$(grep -o "restoring .*: global step [0-9]*" "$run/logs/$victim-restarted.log" | grep -o "[0-9]*$")
        at=$(grep -o "already initialised (version [0-9]*, global step [0-9]*)" "$run/logs/$victim-restarted.log" | head -1 \
               | grep -o "[0-9]*)" | grep -o "[0-9]*")
        [[ -n "$restored" && -n "$at" ]] && lost[$c]+="$((at - restored)) " ;;
    esac
    echo "fault-drill: $name: cluster exit $crc, restarted/joined node exit $rrc, test accuracy $(field "$summary" test_accuracy)"
  done
done

stats() { python3 -c "
import sys
xs = [float(x) for x in sys.argv[1:]]
print('-' if not xs else f'{min(xs):g}..{max(xs):g} (mean {sum(xs) / len(xs):.4g})')" $1; }
{
  echo "| case | trials | resumed unattended | reached ${target} test accuracy | steps lost | time to recover (s) |"
  echo "|---|---|---|---|---|---|"
  for c in $cases; do
    case $c in join) what="join a 4th worker" ;; leave) what="SIGTERM worker 2 (leave)" ;; *) what="kill -9 $c" ;; esac
    echo "| $what | ${ran[$c]} | ${ok[$c]} | ${hit[$c]} | $(stats "${lost[$c]}") | $(stats "${took[$c]}") |"
  done
} | tee "$out/table.md"
echo "fault-drill: runs and logs in $out"
