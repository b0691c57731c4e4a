#!/usr/bin/env bash
# Soaks the simulator: RUNS seeded runs (default 100,000) spread over async, sync, ssp, elastic
# (async, sync and ssp) and in-graph (sync) jobs, each half without and half with shard kills
# (--shard-crashes), small clusters with a large one every 50th seed, and prints simulated
# events per second. Exit 1 on the first invariant broken (its transcript and replay
# command are printed).
# usage: bench/sim_soak.sh [RUNS] [FIRST_SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100000}
first=${2:-1}
sim=build/bin/actorps-sim
[ -x "$sim" ] || scripts/build.sh >/dev/null
kinds=(async sync ssp elastic elastic-sync elastic-ssp in-graph
       async+shards sync+shards ssp+shards elastic+shards elastic-sync+shards elastic-ssp+shards in-graph+shards)
per_mode=$(( runs / ${#kinds[@]} ))
large=$(( per_mode / 50 ))
small=$(( per_mode - large ))
echo "sim_soak: $(( ${#kinds[@]} * per_mode )) runs from seed $first ($small small + $large large per mode)"
status=0
for scale in small large; do
  count=$small; [ "$scale" = large ] && count=$large
  [ "$count" -gt 0 ] || continue
  for kind in "${kinds[@]}"; do
    case ${kind%+shards} in
      elastic-sync) args=(--mode sync --elastic) ;;
      elastic-ssp) args=(--mode ssp --elastic) ;;
      *) args=(--mode "${kind%+shards}") ;;
    esac
    [[ $kind == *+shards ]] && args+=(--shard-crashes)
    out=$("$sim" "${args[@]}" --scale "$scale" --seed "$first" --seeds "$count" --quiet) || status=1
    grep '^seed' <<<"$out" || true   # each violation's line (its transcript: rerun that seed)
    printf '%-6s %-19s %s\n' "$scale" "$kind" "$(tail -1 <<<"$out")"
  done
done
exit $status
