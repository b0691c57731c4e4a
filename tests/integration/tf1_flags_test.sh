#!/usr/bin/env bash
# Integration: clusters started with TF1's flag spellings, as the source documents' command lines
# are written (--job_name, --task_index, --ps_hosts, --worker_hosts, --chief_hosts):
#  1. no chief job (TF1's between-graph example): ps 0 and workers 0 and 1; worker 0's process
#     runs the chief at its own address, the others reach it there; it learns, all exit 0;
#  2. a chief job (--chief_hosts), sync mode: chief, ps 0, workers 0 and 1 as separate processes;
#  3. a bad job name and a TF1 flag beside the option it stands for are refused by name (exit 2);
#  4. the same cluster from TF_CONFIG alone (Kubeflow's layout), and a bad TF_CONFIG refused.
# Usage: tf1_flags_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
train=(--data.dir="\"$tmp/data\"" --model.hidden=[16] --model.classes=4 --train.max-steps=300 --train.learning-rate=0.1
       --train.run-dir="\"$tmp/runs\"" --train.progress-every=100 --cluster.connect-timeout=30s)

# run_nodes NAME ARGS... : each ARGS entry is "LABEL|flags" of one node; starts them all, waits
# (90 s at most) and fails the case when any exits non-zero.
run_nodes() {
  local name=$1; shift
  local pids=() labels=()
  mkdir -p "$tmp/logs/$name"
  for spec in "$@"; do
    local label=${spec%%|*} flags=${spec#*|}
    # shellcheck disable=SC2086
    timeout 90 "$bin/actorps-node" $flags "${train[@]}" --train.name="\"$name\"" > "$tmp/logs/$name/$label.log" 2>&1 &
    pids+=($!) labels+=("$label")
  done
  local ok=0
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      fail "$name: ${labels[$i]} exited non-zero:"; tail -5 "$tmp/logs/$name/${labels[$i]}.log"; ok=1
    fi
  done
  return $ok
}

echo "== 1: --ps_hosts/--worker_hosts/--job_name/--task_index, worker 0 is the chief"
read -r p0 w0 w1 <<< "$(free_ports 3)"
hosts="--ps_hosts=127.0.0.1:$p0 --worker_hosts=127.0.0.1:$w0,127.0.0.1:$w1"
if run_nodes between "ps0|$hosts --job_name=ps --task_index=0" "worker0|$hosts --job_name=worker --task_index=0" \
     "worker1|$hosts --job_name worker --task_index 1"; then
  acc=$(field "$tmp/runs/between/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.6 || fail "between: accuracy $acc is not > 0.6"
  grep -q "mode=async test_accuracy=" "$tmp/logs/between/worker0.log" || fail "between: worker 0 printed no result"
  grep -q "chief: listening at 127.0.0.1:$w0" "$tmp/logs/between/worker0.log" || fail "between: the chief is not at worker 0's address"
  grep -q "worker 1 registered" "$tmp/logs/between/worker0.log" || fail "between: worker 1 did not register with worker 0's chief"
fi

echo "== 2: --chief_hosts, sync: the chief as its own process"
read -r c p0 w0 w1 <<< "$(free_ports 4)"
hosts="--chief_hosts=127.0.0.1:$c --ps_hosts=127.0.0.1:$p0 --worker_hosts=127.0.0.1:$w0,127.0.0.1:$w1 --train.mode=\"sync\""
if run_nodes chiefjob "chief|$hosts --job_name=chief" "ps0|$hosts --job_name=ps --task_index=0" \
     "worker0|$hosts --job_name=worker --task_index=0" "worker1|$hosts --job_name=worker --task_index=1"; then
  acc=$(field "$tmp/runs/chiefjob/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.6 || fail "chiefjob: accuracy $acc is not > 0.6"
  [[ $(field "$tmp/runs/chiefjob/summary.json" mode) == sync ]] || fail "chiefjob: not a sync run"
fi

echo "== 3: malformed TF1 flags"
out=$("$bin/actorps-node" --job_name=master 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *'--job_name must be ps, worker or chief, got "master"'* ]] || fail "bad job name: exit $rc: $out"
out=$("$bin/actorps-node" --job_name=ps --node.role='"worker"' 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"--job_name and --node.role are both given"* ]] || fail "both spellings: exit $rc: $out"
out=$("$bin/actorps-node" --worker_hosts=127.0.0.1:1 --job_name=chief 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"--job_name=chief needs --chief_hosts"* ]] || fail "chief without hosts: exit $rc: $out"

echo "== 4: TF_CONFIG alone (Kubeflow's TFJob): chief, ps 0, workers 0 and 1, sync"
read -r c p0 w0 w1 <<< "$(free_ports 4)"
spec="\"cluster\": {\"chief\": [\"127.0.0.1:$c\"], \"ps\": [\"127.0.0.1:$p0\"], \"worker\": [\"127.0.0.1:$w0\", \"127.0.0.1:$w1\"]}"
mkdir -p "$tmp/logs/tfconfig"
pids=() labels=()
for task in chief:0 ps:0 worker:0 worker:1; do
  TF_CONFIG="{$spec, \"task\": {\"type\": \"${task%%:*}\", \"index\": ${task#*:}}}" \
    timeout 90 "$bin/actorps-node" "${train[@]}" --train.mode='"sync"' --train.name='"tfconfig"' \
    > "$tmp/logs/tfconfig/${task/:/}.log" 2>&1 &
  pids+=($!) labels+=("${task/:/}")
done
tfok=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { fail "tfconfig: ${labels[$i]} exited non-zero:"; tail -5 "$tmp/logs/tfconfig/${labels[$i]}.log"; tfok=1; }
done
if [[ $tfok -eq 0 ]]; then
  acc=$(field "$tmp/runs/tfconfig/summary.json" test_accuracy)
  echo "test accuracy $acc, global step $(field "$tmp/runs/tfconfig/summary.json" global_step)"
  above "$acc" 0.6 || fail "tfconfig: accuracy $acc is not > 0.6"
  [[ $(field "$tmp/runs/tfconfig/summary.json" global_step) == 300 ]] || fail "tfconfig: not at max-steps 300"
fi
out=$(TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "evaluator", "index": 0}}' "$bin/actorps-node" 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *'TF_CONFIG task.type must be chief, master, ps or worker, got "evaluator"'* ]] \
  || fail "a bad TF_CONFIG: exit $rc: $out"

finish
