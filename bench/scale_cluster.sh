#!/usr/bin/env bash
# Real processes at the scale the simulator covers (issue 32): scripts/local-cluster.sh with
# 4 shards and 32 workers on this machine, softmax preset, in async, sync (28 of 32 aggregated)
# and ssp, and an elastic job that grows 8 -> 32 and shrinks back to 8 (100 x STEPS steps: the 24
# joiners load their data first). For each run: whether it
# stopped at exactly max-steps with agreeing counts, the seconds until every worker had
# registered (from the chief's log), the peak resident memory per role and the chief's CPU time
# (both read from /proc while the nodes run).
#
#   bench/scale_cluster.sh [STEPS] [RUNS...]   (default 3000 steps; runs: async sync ssp elastic)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-3000}
shift || true
runs=("$@")
[[ ${#runs[@]} -gt 0 ]] || runs=(async sync ssp elastic)
[[ -x build/bin/actorps-node ]] || scripts/build.sh >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(--model.preset=softmax --train.max-steps="$steps" --train.max-epochs=0 --train.patience=0)

# sample RUN: until the launcher ends, records each node's peak RSS (VmHWM, kB) and the chief's
# CPU ticks into $out/RUN.rss and $out/RUN.cpu
sample() {
  local run=$1 dir=$out/runs/$1 launcher=$2
  declare -A peak=()
  local chief_ticks=0
  while kill -0 "$launcher" 2>/dev/null; do
    if [[ -f $dir/pids ]]; then
      while read -r node pid; do
        [[ -r /proc/$pid/status ]] || continue
        hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n "$hwm" ]] && (( hwm > ${peak[$node]:-0} )) && peak[$node]=$hwm
        if [[ $node == chief ]]; then
          t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true)
          [[ -n "$t" ]] && chief_ticks=$t
        fi
      done < "$dir/pids"
    fi
    sleep 0.2
  done
  for node in "${!peak[@]}"; do echo "$node ${peak[$node]}"; done > "$out/$run.rss"
  echo "$chief_ticks" > "$out/$run.cpu"
}

# elastic_schedule RUN: once the job trains, 24 workers join; 3 s after the last joined, they leave
elastic_schedule() {
  local dir=$out/runs/$1
  for _ in $(seq 1 600); do grep -q "training (" "$dir/logs/chief.log" 2>/dev/null && break; sleep 0.1; done
  for _ in $(seq 1 24); do scripts/cluster-ctl.sh "$dir" add; done
  for _ in $(seq 1 1200); do
    n=$(grep -c "joined:" "$dir/logs/chief.log" 2>/dev/null || true); (( ${n:-0} >= 24 )) && break
    sleep 0.1
  done
  echo "elastic: $(grep -c "joined:" "$dir/logs/chief.log") workers joined ($(grep "joined:" "$dir/logs/chief.log" | tail -1))"
  sleep 3 # 32 workers train a while
  for j in $(seq 0 23); do scripts/cluster-ctl.sh "$dir" remove "worker-j$j" 2>/dev/null || true; done
  for _ in $(seq 1 600); do
    n=$(grep -c "membership: leave" "$dir/logs/chief.log" 2>/dev/null || true); (( ${n:-0} >= 24 )) && break
    sleep 0.1
  done
  echo "elastic: $(grep -c "membership: leave" "$dir/logs/chief.log" || true) workers left; the last: $(grep "membership: leave" "$dir/logs/chief.log" | tail -1)"
}

printf '%-8s %-7s %-6s %-7s %-9s %-9s %-9s %-9s %-9s\n' run exact steps global registered_s worker_MiB ps_MiB chief_MiB chief_cpu_s
for run in "${runs[@]}"; do
  case $run in
    async) args=(--mode async --workers 32 -- "${common[@]}") ;;
    sync) args=(--mode sync --workers 32 -- "${common[@]}" --train.replicas-to-aggregate=28) ;;
    ssp) args=(--mode ssp --workers 32 -- "${common[@]}") ;;
    elastic) args=(--mode async --workers 8 -- "${common[@]}" --train.max-steps=$((steps * 100)) --cluster.elastic
                   --cluster.min-workers=1 --cluster.max-workers=32) ;;
    *) echo "unknown run '$run'" >&2; exit 2 ;;
  esac
  scripts/local-cluster.sh --ps 4 --name "$run" --run-dir "$out/runs" --deadline 600 "${args[@]}" > "$out/$run.log" 2>&1 &
  launcher=$!
  [[ $run == elastic ]] && elastic_schedule "$run" > "$out/$run.schedule" 2>&1 &
  sample "$run" "$launcher"
  wait "$launcher" || { echo "$run: the cluster failed:"; tail -15 "$out/$run.log"; continue; }
  wait || true
  summary=$out/runs/$run/summary.json
  limit=$steps; [[ $run == elastic ]] && limit=$((steps * 100))
  read -r s g < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['steps'], d['global_step'])" "$summary")
  exact=no; [[ $s == "$limit" && $g == "$limit" ]] && exact=yes
  reg=$(grep -m1 "workers registered; training" "$out/runs/$run/logs/chief.log" | grep -o "^\[ *[0-9.]*s\]" | tr -d '[]s ')
  mib() { awk -v pat="$1" '$1 ~ pat {if ($2 > m) m = $2} END {printf "%.0f", m / 1024}' "$out/$run.rss"; }
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", $1 / hz}' "$out/$run.cpu")
  printf '%-8s %-7s %-6s %-7s %-9s %-9s %-9s %-9s %-9s\n' "$run" "$exact" "$s" "$g" "${reg:-?}" "$(mib '^worker')" \
    "$(mib '^ps')" "$(mib '^chief')" "$cpu"
  [[ $run == elastic ]] && cat "$out/$run.schedule"
done
