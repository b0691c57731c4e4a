#!/usr/bin/env bash
# Configures and builds actorps into build/ (Release, -j2). Extra arguments go to cmake,
# e.g. scripts/build.sh -DACTORPS_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ACTORPS_JOBS:-2}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" > build.log.tmp 2>&1 || { cat build.log.tmp >&2; rm -f build.log.tmp; exit 1; }
grep -E "actorps:|CUDA" build.log.tmp || true
rm -f build.log.tmp
cmake --build build -j "$jobs"
