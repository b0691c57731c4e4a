# Shared by the integration scripts (sourced): arguments, a scratch folder, failure counting.
# ACTORPS_KEEP_TEST_TMP=1 keeps the scratch folder (its path on stderr) to read a failed run's logs.
# Usage in a script: source "$(dirname "$0")/lib.sh" "$@"   (REPO_ROOT BIN_DIR)
set -u
root=$1 bin=$2
tmp=$(mktemp -d)
trap 'if [[ -n ${ACTORPS_KEEP_TEST_TMP:-} ]]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# field FILE KEY: a value from a JSON summary
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
# above VALUE MIN: succeeds when VALUE > MIN
above() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$1" "$2"; }
# trains_above NAME MIN WHAT [local-cluster.sh options]: runs cluster NAME and checks its test
# accuracy is above MIN (WHAT names the run in the lines it prints)
trains_above() {
  local name=$1 min=$2 what=$3 acc
  shift 3
  if cluster --name "$name" "$@" > "$tmp/$name.out" 2>&1; then
    acc=$(field "$tmp/runs/$name/summary.json" test_accuracy)
    echo "$what: test accuracy $acc"
    above "$acc" "$min" || fail "$what: test accuracy $acc is not above $min"
  else
    fail "$what failed:"; tail -5 "$tmp/$name.out"
  fi
}
# free_ports N: N distinct ports for nodes on one line, outside the kernel's ephemeral range and
# claimed from concurrent tests (scripts/free-ports.py); free_port: one
free_ports() { python3 "$root/scripts/free-ports.py" "$1" | paste -sd ' '; }
free_port() { free_ports 1; }
# cluster [local-cluster.sh options]: a local cluster writing under the scratch folder
cluster() { "$root/scripts/local-cluster.sh" --run-dir "$tmp/runs" --bin "$bin" "$@"; }
# signal_when_training SIGNAL SECONDS NAME NODE: once run NAME's chief logs "training (", waits
# SECONDS and sends SIGNAL (e.g. KILL, TERM, STOP) to NODE (e.g. worker-2); prints its pid, or
# nothing when training never started (30 s)
signal_when_training() {
  local pid
  for _ in $(seq 1 300); do
    if grep -q "training (" "$tmp/runs/$3/logs/chief.log" 2>/dev/null; then
      sleep "$2"
      pid=$(awk -v node="$4" '$1 == node {print $2}' "$tmp/runs/$3/pids")
      kill -"$1" "$pid" && echo "$pid"
      return
    fi
    sleep 0.1
  done
}
# end_run NAME: SIGTERM to run NAME's chief, which ends the run as at its limit (final evaluation,
# summary); for runs given a step limit only to outlast a probe
end_run() { kill -TERM "$(awk '$1 == "chief" {print $2}' "$tmp/runs/$1/pids")"; }
# kill_when_training NAME NODE: kill -9 of NODE a second into training (signal_when_training)
kill_when_training() { signal_when_training KILL 1 "$1" "$2"; }
# restart_killed_worker RUN J LOG [options]: kill -9s worker J of run RUN once it trains, then
# starts it again from the run's cluster.ini with the options (output in LOG); sets `restarted`
# to its pid (empty, with a failure counted, when training never started)
restart_killed_worker() {
  local run=$1 j=$2 log=$3 victim
  shift 3
  restarted=""
  victim=$(kill_when_training "$run" "worker-$j")
  [[ -n "$victim" ]] || { fail "$run: training never started"; return; }
  echo "killed worker-$j (pid $victim)"
  sleep 1
  "$bin/actorps-node" --config-file="$tmp/runs/$run/cluster.ini" --node.role=worker --node.index="$j" "$@" > "$log" 2>&1 &
  restarted=$!
}
# same_weights RUN_A RUN_B WHAT: the two runs' summaries have the same (non-empty) weights digest
same_weights() {
  local a b
  a=$(field "$tmp/runs/$1/summary.json" weights_digest 2>/dev/null)
  b=$(field "$tmp/runs/$2/summary.json" weights_digest 2>/dev/null)
  echo "weights digests: $1 $a, $2 $b"
  [[ -n "$a" && "$a" == "$b" ]] || fail "$3: digests differ: '$a' vs '$b'"
}
# sync_twice MIN_ACCURACY [training options]: a seeded sync cluster (1 shard x 2 workers, runs
# sync1 and sync2) twice; each beats MIN_ACCURACY and both end with the same weights digest
sync_twice() {
  local min=$1 run acc
  shift
  for run in 1 2; do
    if cluster --mode sync --ps 1 --workers 2 --name "sync$run" --deadline 120 -- "$@" > "$tmp/sync$run.out" 2>&1; then
      acc=$(field "$tmp/runs/sync$run/summary.json" test_accuracy)
      echo "run $run: test accuracy $acc"
      above "$acc" "$min" || fail "sync run $run: accuracy $acc"
    else
      fail "sync run $run failed:"; tail -20 "$tmp/sync$run.out"
    fi
  done
  same_weights sync1 sync2 "the seeded sync runs"
}
# finish: prints the count and exits non-zero on any failure
finish() { echo "$failures failure(s)"; [[ $failures -eq 0 ]]; }
