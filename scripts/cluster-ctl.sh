#!/usr/bin/env bash
# Changes a running elastic cluster of scripts/local-cluster.sh (run with -- --cluster.elastic):
#
#   scripts/cluster-ctl.sh RUN add            start one more worker; it joins the job
#   scripts/cluster-ctl.sh RUN remove NODE    make NODE (e.g. worker-1, worker-j0) leave (SIGTERM)
#   scripts/cluster-ctl.sh RUN nodes          list the nodes and their PIDs
#
# RUN is the cluster's run directory (runs/<name>: it holds cluster.ini, pids and control).
set -euo pipefail
usage() { sed -n '2,8p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
run=$1 what=$2
[[ -f "$run/control" ]] || { echo "cluster-ctl: $run/control not found: is a local-cluster.sh run there?" >&2; exit 2; }
case "$what" in
  add) echo add >> "$run/control" ;;
  remove) [[ $# -eq 3 ]] || usage
          grep -q "^$3 " "$run/pids" || { echo "cluster-ctl: no node '$3' in $run/pids" >&2; exit 2; }
          echo "remove $3" >> "$run/control" ;;
  nodes) cat "$run/pids" ;;
  *) usage ;;
esac
