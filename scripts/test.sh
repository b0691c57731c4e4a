#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest. Exit code: the tests'.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"
cd build
ctest --output-on-failure -j "${ACTORPS_JOBS:-2}"
