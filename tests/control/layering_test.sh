#!/usr/bin/env bash
# control/ sits below the configuration and the trainer: its files include nothing from config/,
# train/, gpu/, observe/, checkpoint/, saved_model/, actors/, node/, sim/ or apps/, and its library
# links none of theirs (issue 49: run_control reached gpu/ through train/stop_rule and
# config/train_options). The simulator (sim/) stands on control/ alone the same way: nothing of
# config/ or above (its scenario took the train mode from config/cluster_options.hpp).
set -euo pipefail
root=${1:?usage: layering_test.sh REPO_ROOT}
pattern='#include[[:space:]]*"(config|train|gpu|observe|checkpoint|saved_model|actors|node|sim|apps)/'
if hits=$(grep -rnE "$pattern" "$root/control" --include='*.hpp' --include='*.cpp'); then
  echo "control/ must not reach the layers above it:" >&2
  echo "$hits" >&2
  exit 1
fi
sim_pattern='#include[[:space:]]*"(config|train|gpu|observe|checkpoint|saved_model|actors|node|apps)/'
if hits=$(grep -rnE "$sim_pattern" "$root/sim" --include='*.hpp' --include='*.cpp'); then
  echo "sim/ must stand on control/ alone:" >&2
  echo "$hits" >&2
  exit 1
fi
deps=$(sed -n '/actorps_add_library(actorps_control/,/)/p' "$root/control/CMakeLists.txt" | grep -o 'actorps_[a-z_]*' | grep -v -e '^actorps_control$' -e '^actorps_add_library$' | sort -u | tr '\n' ' ')
for lib in $deps; do
  case $lib in
    actorps_common|actorps_messages|actorps_data|actorps_model|actorps_compute|actorps_wire) ;;
    *) echo "control/ links $lib, above it" >&2; exit 1 ;;
  esac
done
echo "control/ includes and links only: ${deps}(and common/)"
