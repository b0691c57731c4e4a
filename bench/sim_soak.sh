#!/usr/bin/env bash
# Soaks the simulator: RUNS seeded runs (default 100,000) spread over async, sync, ssp, elastic
# (async, sync and ssp) and in-graph (sync) jobs, without and with shard kills (--shard-crashes),
# with shard kills and damaged checkpoints (--storage-faults),
# overlapped steps in async and ssp (cluster.overlap-steps; a third of the async seeds with a
# table, its rows asked back), also with shard kills in async, shards frozen past the request
# timeout with the workers over links (--shard-freezes), also with shard kills,
# model-parallel groups, and scopes (a session, then one attaching to the scope it kept: two
# runs a seed), small clusters with a large one every 50th seed; prints simulated events per
# second. Exit 1 on the first invariant broken (its transcript and replay
# command are printed).
# usage: bench/sim_soak.sh [RUNS] [FIRST_SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100000}
first=${2:-1}
sim=build/bin/actorps-sim
[ -x "$sim" ] || scripts/build.sh >/dev/null
kinds=(async sync ssp elastic elastic-sync elastic-ssp in-graph model-parallel scopes-async scopes-sync scopes-ssp
       async+shards sync+shards ssp+shards elastic+shards elastic-sync+shards elastic-ssp+shards in-graph+shards
       async+storage sync+storage ssp+storage in-graph+storage model-parallel+storage
       async+overlap ssp+overlap async+shards+overlap
       async+freezes sync+freezes ssp+freezes async+shards+freezes)
per_mode=$(( runs / ${#kinds[@]} ))
large=$(( per_mode / 50 ))
small=$(( per_mode - large ))
echo "sim_soak: $(( ${#kinds[@]} * per_mode )) seeded scenarios from seed $first ($small small + $large large per kind; a scopes scenario is two runs)"
status=0
for scale in small large; do
  count=$small; [ "$scale" = large ] && count=$large
  [ "$count" -gt 0 ] || continue
  for kind in "${kinds[@]}"; do
    case ${kind%+*} in
      elastic-sync) args=(--mode sync --elastic) ;;
      elastic-ssp) args=(--mode ssp --elastic) ;;
      scopes-*) args=(--mode "${kind#scopes-}" --scopes) ;;
      *) args=(--mode "${kind%+*}") ;;
    esac
    [[ $kind == *+shards ]] && args+=(--shard-crashes)
    [[ $kind == *+storage ]] && args+=(--shard-crashes --storage-faults)
    [[ $kind == *+overlap ]] && args=(--mode "${kind%%+*}" --overlap-steps 1)
    [[ $kind == *+shards+overlap ]] && args+=(--shard-crashes)
    [[ $kind == *+freezes ]] && args=(--mode "${kind%%+*}" --shard-freezes)
    [[ $kind == *+shards+freezes ]] && args+=(--shard-crashes)
    out=$("$sim" "${args[@]}" --scale "$scale" --seed "$first" --seeds "$count" --quiet) || status=1
    grep '^seed' <<<"$out" || true   # each violation's line (its transcript: rerun that seed)
    printf '%-6s %-22s %s\n' "$scale" "$kind" "$(tail -1 <<<"$out")"
  done
done
exit $status
