#!/usr/bin/env bash
# Elastic membership, measured: for sync, async and ssp, a Fashion-MNIST job that goes
# 2 -> 4 -> 1 workers (two join once it trains, three leave after epoch 1) next to a fixed
# 2-worker job with the same epochs and seed, in one run: test accuracy, examples/s, steps, and
# whether every epoch used each example exactly once. It is tests/integration/elastic_test.sh
# with more epochs (that script holds the schedule and the checks).
#
#   bench/elastic.sh [EPOCHS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/bin/actorps-node ]] || scripts/build.sh
ELASTIC_MODES=${ELASTIC_MODES:-"sync async ssp"} ELASTIC_EPOCHS=${1:-5} tests/integration/elastic_test.sh "$PWD" "$PWD/build/bin"
