#!/usr/bin/env bash
# A real Slurm (Debian's slurm-wlm and munge, installed by scripts/install-deps.sh): this script
# configures a one-node controller and daemon on 127.0.0.1 in its scratch folder (ports of its
# own, the node's real name), starts them, and stops them on the way out, failed or not.
#  1. sbatch --wait of scripts/slurm/actorps.sbatch, 3 tasks: task 0 the ps, tasks 1-2 the workers
#     (worker 0 runs the chief): the job exits 0 with a summary.json at max-steps;
#  2. the same with --slurm-chief: 4 tasks, the chief a task of its own, sync;
#  3. a job whose tasks are all ps is refused by name (its nodes exit 2, the job fails).
# Needs root (slurmd runs jobs as any user): exits 77 (skipped) otherwise.
# Usage: slurm_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

if [[ $(id -u) -ne 0 ]]; then echo "skipped: slurmd needs root"; exit 77; fi
for tool in munged slurmctld slurmd sbatch scontrol; do
  command -v "$tool" > /dev/null || { echo "FAIL: $tool not found: run scripts/install-deps.sh"; exit 1; }
done
sl=$tmp/slurm
mkdir -p "$sl/state" "$sl/spool" "$sl/munge" "$sl/log"
chmod 700 "$sl/munge"
dd if=/dev/urandom of="$sl/munge/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$sl/munge/munge.key"
# The tasks listen at node_port, node_port + 1, ...: a base whose next 8 ports are free (one
# free port alone let a concurrent test take task 1's port under ctest -j2), outside the kernel's
# ephemeral range as every port here (scripts/free-ports.py)
read -r ctld_port slurmd_port <<< "$(free_ports 2)"
node_port=$(python3 "$root/scripts/free-ports.py" --block 8)
[[ -n "$ctld_port" && -n "$slurmd_port" && -n "$node_port" ]] || { echo "FAIL: no free ports for Slurm"; exit 1; }
node=$(hostname -s)
# (tasks listen at their node's name, as on a real cluster: it must resolve)
getent hosts "$node" > /dev/null || { echo "skipped: this machine's name $node does not resolve"; exit 77; }
export SLURM_CONF=$sl/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=actorps-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sl/munge/sock
CredType=cred/munge
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd.pid
SlurmctldLogFile=$sl/log/slurmctld.log
SlurmdLogFile=$sl/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# Stops what this script started: the daemons (by their config file's path), the job steps
# they left, munged; waits for them to go, then kills what is left.
stop_slurm() {
  scancel --quiet --user=root > /dev/null 2>&1
  scontrol shutdown > /dev/null 2>&1
  local pids=()
  for _ in $(seq 1 50); do
    mapfile -t pids < <(pgrep -f "$SLURM_CONF"; pgrep -f "munged.*$sl/munge"; pgrep -x slurmstepd)
    [[ ${#pids[@]} -eq 0 ]] && break
    kill "${pids[@]}" 2> /dev/null
    sleep 0.1
  done
  [[ ${#pids[@]} -gt 0 ]] && kill -9 "${pids[@]}" 2> /dev/null
  rm -rf "$tmp"
}
trap stop_slurm EXIT
munged --key-file="$sl/munge/munge.key" --socket="$sl/munge/sock" --log-file="$sl/log/munged.log" \
  --pid-file="$sl/munge/pid" --seed-file="$sl/munge/seed" --force || { echo "FAIL: munged did not start"; exit 1; }
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF" || { echo "FAIL: the Slurm daemons did not start"; exit 1; }
for _ in $(seq 1 100); do
  sinfo -h -o %t 2> /dev/null | grep -q idle && break
  sleep 0.2
done
sinfo -h -o %t | grep -q idle || { echo "FAIL: the node never became idle:"; sinfo; tail -5 "$sl/log/slurmctld.log"; exit 1; }
echo "slurm up: node $node, controller port $ctld_port"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
common=(--slurm-port-base="$node_port" --data.dir="\"$tmp/data\"" --model.hidden=[16] --model.classes=4
        --train.max-steps=300 --train.max-epochs=0 --train.run-dir="\"$tmp/runs\"")
# job NAME TASKS [options]: sbatch --wait of the job script from the checkout; its output in NAME.out
job() {
  local name=$1 tasks=$2
  shift 2
  (cd "$root" && ACTORPS_BIN=$bin timeout 180 sbatch --wait --ntasks="$tasks" --overcommit \
     --output="$tmp/$name.out" scripts/slurm/actorps.sbatch "${common[@]}" --train.name="\"$name\"" "$@")
}

echo "== 1: 3 tasks: ps 0, workers 0 and 1 (worker 0 runs the chief)"
if job between 3 > "$tmp/between.sbatch" 2>&1; then
  echo "test accuracy $(field "$tmp/runs/between/summary.json" test_accuracy), global step $(field "$tmp/runs/between/summary.json" global_step)"
  [[ $(field "$tmp/runs/between/summary.json" global_step) == 300 ]] || fail "between: not at max-steps 300"
  grep -q "chief: listening at $node:$((node_port + 1))" "$tmp/between.out" || fail "between: the chief is not at task 1's port"
else
  fail "the 3-task job failed:"; tail -n 10 "$tmp/between.out" "$tmp/between.sbatch"
fi

echo "== 2: 4 tasks with --slurm-chief, sync"
if job chiefjob 4 --slurm-chief --train.mode='"sync"' > "$tmp/chiefjob.sbatch" 2>&1; then
  echo "test accuracy $(field "$tmp/runs/chiefjob/summary.json" test_accuracy), mode $(field "$tmp/runs/chiefjob/summary.json" mode)"
  [[ $(field "$tmp/runs/chiefjob/summary.json" mode) == sync ]] || fail "chiefjob: not a sync run"
else
  fail "the 4-task job failed:"; tail -n 10 "$tmp/chiefjob.out" "$tmp/chiefjob.sbatch"
fi

echo "== 3: every task a ps"
if job allps 2 --slurm-ps=2 > "$tmp/allps.sbatch" 2>&1; then
  fail "a job without workers ran"
else
  grep -q -- "--slurm-ps=2 leaves no worker among the job's 2 tasks" "$tmp/allps.out" \
    || { fail "the refusal does not name --slurm-ps:"; tail -3 "$tmp/allps.out"; }
fi

finish
