#!/usr/bin/env bash
# What a lent GPU machine needs to run bench/gpu_bench.sh: its image has CUDA (and cuBLAS) but no
# CAF, Boost or OpenBLAS, and nothing can be fetched there. So the binaries are built here and
# travel with the Debian libraries they link and Fashion-MNIST, in .gpu-carry/ (git-ignored,
# about 41 MB: the device tool carries at most 64 MiB with the working tree).
#   bench/gpu_carry.sh pack                     here, after scripts/build.sh (CUDA built: nvcc found)
#   bench/gpu_carry.sh run [mlp-steps] [cnn-steps]
#       there, through the device tool: command "bench/gpu_carry.sh run 6000 2000",
#       carry [".gpu-carry"]; unpacks into /tmp, runs bench/gpu_bench.sh on the carried binaries
#       and data, and writes its output to $OUT/gpu_bench.log as well (when OUT is set).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.gpu-carry

pack() {
  local build=build
  [[ -x $build/bin/actorps-node && -x $build/tests/gpu_tests ]] \
    || { echo "gpu_carry: no build/bin/actorps-node or build/tests/gpu_tests: run scripts/build.sh first" >&2; exit 2; }
  ldd "$build/tests/gpu_tests" | grep -q libcudart \
    || { echo "gpu_carry: build/ has no CUDA backend (no nvcc when it was configured): nothing to run on a GPU" >&2; exit 2; }
  local data=${ACTORPS_DATA_DIR:-/usr/share/datasets/fashion-mnist}
  [[ -f $data/train-images-idx3-ubyte.gz ]] || { echo "gpu_carry: no Fashion-MNIST in $data" >&2; exit 2; }
  local stage
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' RETURN
  mkdir -p "$stage/actorps/bin" "$stage/actorps/lib"
  cp "$build/bin/actorps-node" "$build/bin/actorps-train" "$build/tests/gpu_tests" "$stage/actorps/bin/"
  # every library the binaries link, but the C library's own (the image has its own, and a
  # second copy of those cannot be mixed with it)
  ldd "$stage"/actorps/bin/* | awk '$3 ~ /^\// {print $3}' | sort -u \
    | grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' \
    | while read -r lib; do cp -L "$lib" "$stage/actorps/lib/"; done
  rm -rf "$carry"
  mkdir -p "$carry/data"
  tar cJf "$carry/actorps.tar.xz" -C "$stage" actorps
  cp "$data"/*-ubyte.gz "$carry/data/"
  echo "gpu_carry: $(du -sh "$carry" | cut -f1) in $carry ($(ls "$stage/actorps/lib" | wc -l) libraries); on the device:" \
       "command \"bench/gpu_carry.sh run 6000 2000\", carry [\"$carry\"]"
}

run() {
  [[ -f $carry/actorps.tar.xz ]] || { echo "gpu_carry: no $carry/actorps.tar.xz: run 'bench/gpu_carry.sh pack' here and carry $carry" >&2; exit 2; }
  local root=/tmp/actorps-carried
  rm -rf "$root"
  mkdir -p "$root"
  tar xJf "$carry/actorps.tar.xz" -C "$root"
  # the carried libraries, then the image's CUDA (cuBLAS is loaded by name where the build's path is absent)
  export LD_LIBRARY_PATH="$root/actorps/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export ACTORPS_BIN="$root/actorps/bin" ACTORPS_GPU_TESTS="$root/actorps/bin/gpu_tests" ACTORPS_DATA_DIR="$PWD/$carry/data"
  "$ACTORPS_BIN/actorps-train" --help > /dev/null \
    || { echo "gpu_carry: the carried actorps-train does not start here:" >&2; ldd "$ACTORPS_BIN/actorps-train" | grep -i "not found" >&2; exit 1; }
  if [[ -n ${OUT:-} ]]; then
    bench/gpu_bench.sh "$@" 2>&1 | tee "$OUT/gpu_bench.log"
  else
    bench/gpu_bench.sh "$@"
  fi
}

case ${1:-} in
  pack) pack ;;
  run) shift; run "$@" ;;
  *) echo "usage: bench/gpu_carry.sh pack | run [mlp-steps] [cnn-steps]" >&2; exit 2 ;;
esac
