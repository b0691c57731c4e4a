#!/usr/bin/env bash
# Runs a whole actorps cluster on 127.0.0.1, one OS process per node (chief, ps shards, workers):
# writes the cluster config, picks free ports, streams the chief's progress, collects every
# node's log under runs/<name>/logs/, kills every child on Ctrl-C or failure, and exits non-zero
# if any node failed.
#
#   scripts/local-cluster.sh [--mode async|sync|ssp] [--ps N] [--workers N] [--name NAME]
#                            [--run-dir DIR] [--bin DIR] [--deadline SECONDS] [--tolerate NODE]...
#                            [--tls] [--metrics] [--pin] [--addr NODE=IP]... [--netns-prefix P]
#                            [-- actorps-node options...]
#
# --tls: makes a cluster CA and a certificate per node (scripts/make-certs.sh, under
# runs/<name>/certs) and runs every connection over TLS with mutual authentication.
#
# --metrics: every node serves Prometheus' /metrics on a port of its own (node.metrics-port, on
# 127.0.0.1 or its --addr), elastic joiners too; runs/<name>/metrics-ports lists "NODE PORT",
# runs/<name>/targets.json is Prometheus' file-based discovery list of them (rewritten as workers
# join) and runs/<name>/prometheus.yml a scrape configuration that reads it:
# prometheus --config.file=runs/<name>/prometheus.yml
#
# --pin: each worker runs on CPUs of its own (node.cpus): the CPUs this script may use, split
# evenly among the workers in order (more workers than CPUs: they share them in turn); the ps
# nodes and the chief are not pinned. On a host the nodes share, a worker's threads then hand
# its steps to each other on one core (docs/results.md: the MLP's 1 x 2 cluster 1.08-1.11x).
#
# --tolerate worker-2: that node may die (e.g. killed for a drill) without failing the cluster.
# The PIDs of the nodes are written to runs/<name>/pids ("NODE PID" lines).
#
# --addr ps-0=10.99.0.2: that node listens on (and is reached at) this address instead of
# 127.0.0.1; --netns-prefix P runs node N in the network namespace "P<N>" (ip netns exec, as
# root), e.g. the namespaces bench/netem_cluster.sh makes.
#
# Elastic jobs (-- --cluster.elastic ...): while the cluster runs, scripts/cluster-ctl.sh RUN add
# starts one more worker that joins the job (worker-jN, node.join) and scripts/cluster-ctl.sh
# RUN remove worker-1 makes a worker leave (SIGTERM); RUN is runs/<name>. Removed workers exit 0.
#
# Example: scripts/local-cluster.sh --ps 2 --workers 3 -- --train.max-epochs=5
set -uo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
root=$PWD
absolute() { [[ "$1" = /* ]] && echo "$1" || echo "$caller/$1"; } # paths given are the caller's

mode=async ps=1 workers=2 name="" bin=$root/build/bin deadline=3600 run_dir=$root/runs
declare -A tolerated=() addr=()
tls=false metrics=false pin=false netns_prefix=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mode) mode=$2; shift 2 ;;
    --ps) ps=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --bin) bin=$(absolute "$2"); shift 2 ;;
    --run-dir) run_dir=$(absolute "$2"); shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --tolerate) tolerated[$2]=1; shift 2 ;;
    --tls) tls=true; shift ;;
    --metrics) metrics=true; shift ;;
    --pin) pin=true; shift ;;
    --addr) [[ "$2" == *=* ]] || { echo "local-cluster: --addr wants NODE=IP, got '$2'" >&2; exit 2; }
            addr[${2%%=*}]=${2#*=}; shift 2 ;;
    --netns-prefix) netns_prefix=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "local-cluster: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=("$@")
[[ "$ps" =~ ^[1-9][0-9]*$ ]] || { echo "local-cluster: --ps must be a positive number, got '$ps'" >&2; exit 2; }
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || { echo "local-cluster: --workers must be a positive number, got '$workers'" >&2; exit 2; }
[[ -x "$bin/actorps-node" ]] || { echo "local-cluster: $bin/actorps-node not found: run scripts/build.sh first" >&2; exit 2; }
[[ -n "$name" ]] || name="$mode-ps$ps-w$workers-$(date +%Y%m%d-%H%M%S)"

run="$run_dir/$name"
mkdir -p "$run/logs"
# free_ports N: N distinct free ports outside the kernel's ephemeral range, claimed from other
# callers (scripts/free-ports.py says why)
free_ports() { python3 "$root/scripts/free-ports.py" "$1"; }
nodes_count=$((1 + ps + workers))
want_ports=$([[ $metrics == true ]] && echo $((2 * nodes_count)) || echo "$nodes_count")
mapfile -t ports < <(free_ports "$want_ports")
[[ ${#ports[@]} -eq $want_ports ]] || { echo "local-cluster: could not pick $want_ports ports (above)" >&2; exit 1; }
host() { echo "${addr[$1]:-127.0.0.1}"; } # host NODE-NAME
list() { # list ROLE FIRST COUNT -> ["host:p", ...] for nodes ROLE-0 ..
  local out="" i
  for ((i = 0; i < $3; i++)); do out+="${out:+, }\"$(host "$1-$i"):${ports[$(($2 + i))]}\""; done
  echo "[$out]"
}
config="$run/cluster.ini"
cat > "$config" <<INI
; written by scripts/local-cluster.sh
[cluster]
chief = "$(host chief):${ports[0]}"
ps = $(list ps 1 "$ps")
workers = $(list worker $((1 + ps)) "$workers")
[train]
mode = "$mode"
name = "$name"
run-dir = "$run_dir"
INI

declare -A pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  [[ -n "${tail_pid:-}" ]] && kill "$tail_pid" 2>/dev/null
}
trap 'echo "local-cluster: interrupted; stopping every node" >&2; cleanup; exit 130' INT TERM

nodes=(chief)
for ((i = 0; i < ps; i++)); do nodes+=("ps-$i"); done
for ((i = 0; i < workers; i++)); do nodes+=("worker-$i"); done
if [[ $tls == true ]]; then
  scripts/make-certs.sh "$run/certs" "${nodes[@]}" > /dev/null || { echo "local-cluster: making certificates failed" >&2; exit 1; }
fi
declare -A metrics_port=()
# write_targets: Prometheus' file-based discovery list of every node's /metrics (re-read by the
# server as it changes, so a joiner's port is scraped too)
write_targets() {
  local targets="" node
  for node in "${!metrics_port[@]}"; do targets+="${targets:+, }\"$(host "$node"):${metrics_port[$node]}\""; done
  echo "[{\"targets\": [$targets], \"labels\": {\"cluster\": \"$name\"}}]" > "$run/targets.json.tmp"
  mv "$run/targets.json.tmp" "$run/targets.json"
}
if [[ $metrics == true ]]; then # the second half of the ports: one per node, in the order of nodes
  : > "$run/metrics-ports"
  for ((i = 0; i < nodes_count; i++)); do
    node=${nodes[$i]}
    metrics_port[$node]=${ports[$((nodes_count + i))]}
    echo "$node ${metrics_port[$node]}" >> "$run/metrics-ports"
  done
  write_targets
  cat > "$run/prometheus.yml" <<YML
# written by scripts/local-cluster.sh --metrics: prometheus --config.file=$run/prometheus.yml
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: actorps
    file_sd_configs:
      - files: ["$run/targets.json"]
        refresh_interval: 5s
YML
fi
declare -A cpus_of=() # --pin: node.cpus of each worker
if [[ $pin == true ]]; then
  read -r -a usable <<< "$(python3 -c "import os; print(' '.join(map(str, sorted(os.sched_getaffinity(0)))))")"
  share=$(( ${#usable[@]} / workers )); (( share < 1 )) && share=1
  for ((i = 0; i < workers; i++)); do
    list=""
    for ((j = 0; j < share; j++)); do list+="${list:+,}${usable[$(( (i * share + j) % ${#usable[@]} ))]}"; done
    cpus_of[worker-$i]=$list
  done
fi
start() { # start NODE-NAME ROLE INDEX|join
  : > "$run/logs/$1.log" # exists before the streaming tail looks for it
  local place=(--node.index="$3")
  [[ $3 == join ]] && place=(--node.join="$(host chief):${ports[0]}")
  local security=()
  [[ $tls == true ]] && security=(--security.tls --openssl.certificate="$run/certs/$1.pem"
                                  --openssl.key="$run/certs/$1.key" --openssl.cafile="$run/certs/ca.pem")
  local wrap=()
  [[ -n "$netns_prefix" ]] && wrap=(ip netns exec "$netns_prefix$1")
  local observe=()
  [[ -n "${metrics_port[$1]:-}" ]] && observe=(--node.metrics-port="${metrics_port[$1]}" --node.metrics-address="$(host "$1")")
  [[ -n "${cpus_of[$1]:-}" ]] && observe+=(--node.cpus="${cpus_of[$1]}")
  # (in the caller's directory: relative paths after -- are the caller's, e.g. --checkpoint.dir=ckpts)
  (cd "$caller" && exec "${wrap[@]}" "$bin/actorps-node" --config-file="$config" --node.role="$2" "${place[@]}" \
     "${security[@]}" "${observe[@]}" "${extra[@]}") > "$run/logs/$1.log" 2>&1 &
  pids[$1]=$!
  echo "$1 $!" >> "$run/pids"
}
: > "$run/pids"
for ((i = 0; i < ps; i++)); do start "ps-$i" ps "$i"; done
for ((i = 0; i < workers; i++)); do start "worker-$i" worker "$i"; done
start chief chief 0
echo "local-cluster: $mode, $ps shard(s), $workers worker(s)$([[ $tls == true ]] && echo ", TLS"); config $config; logs $run/logs/"
tail -s 0.1 -n +1 -f "$run/logs/chief.log" --pid="${pids[chief]}" &
tail_pid=$!

# scripts/cluster-ctl.sh appends "add" or "remove NODE" lines to $run/control.
: > "$run/control"
handled=0 joiners=0
declare -A leaving=()
control() {
  local lines line
  mapfile -t lines < <(tail -n +$((handled + 1)) "$run/control")
  for line in "${lines[@]}"; do
    handled=$((handled + 1))
    case "$line" in
      add)
        [[ $tls == true ]] && { echo "local-cluster: add: joining workers have no TLS certificate here" >&2; continue; }
        if [[ $metrics == true ]]; then # a port of its own, listed for Prometheus
          metrics_port[worker-j$joiners]=$(free_ports 1)
          echo "worker-j$joiners ${metrics_port[worker-j$joiners]}" >> "$run/metrics-ports"
          write_targets
        fi
        start "worker-j$joiners" worker join
        echo "local-cluster: started worker-j$joiners to join the job (pid ${pids[worker-j$joiners]})"
        joiners=$((joiners + 1)) ;;
      "remove "*)
        local node=${line#remove }
        if [[ -n "${pids[$node]:-}" ]]; then
          leaving[$node]=1
          kill -TERM "${pids[$node]}" && echo "local-cluster: asked $node to leave (SIGTERM)"
        else
          echo "local-cluster: remove: no running node '$node'" >&2
        fi ;;
      *) echo "local-cluster: unknown control line '$line' (add | remove NODE)" >&2 ;;
    esac
  done
}

# Wait for every node; the first failure stops the rest.
failed=() end=$((SECONDS + deadline))
while [[ ${#pids[@]} -gt 0 ]]; do
  control
  for node in "${!pids[@]}"; do
    pid=${pids[$node]}
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"; rc=$?
      unset "pids[$node]"
      if [[ $rc -ne 0 && ( -n "${tolerated[$node]:-}" || -n "${leaving[$node]:-}" ) ]]; then
        echo "local-cluster: $node exited with code $rc (tolerated)" >&2
      elif [[ $rc -ne 0 ]]; then
        failed+=("$node (exit $rc)")
        echo "local-cluster: $node failed with exit code $rc; last lines of $run/logs/$node.log:" >&2
        tail -n 5 "$run/logs/$node.log" >&2
        cleanup
      fi
    fi
  done
  if [[ $SECONDS -ge $end ]]; then
    failed+=("deadline of ${deadline}s passed")
    cleanup
    break
  fi
  sleep 0.1
done
wait "$tail_pid" 2>/dev/null
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "local-cluster: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "local-cluster: every node exited 0; summary $run/summary.json"
cat "$run/summary.json"
