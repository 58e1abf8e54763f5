#!/usr/bin/env bash
#===- gpu-bandwidth.sh - Real bandwidth of the generated copies on a GPU --===#
#
# On a machine with a CUDA GPU: builds scenario (b) of
# docs/TransferPerformance.md (one upload and one download of BYTES through
# host buffers the lowered function allocates and frees) with pageable host
# buffers (pinned-host-memory=false) and with the default lowering (pinned
# host buffers), links both against
# the real libcudart, and prints the median wall-clock time and bandwidth of
# one of CALLS calls of each (CUDA initialised first), next to plain
# synchronous cudaMemcpy of the same bytes between buffers allocated once,
# pinned and pageable, measured in the same process. The generated code's
# figures include its host allocations (at the first call; later calls
# reuse the cached blocks), which are part of what it costs.
#
#   utils/transfer-performance/gpu-bandwidth.sh [BYTES [CALLS]]
#   utils/transfer-performance/gpu-bandwidth.sh --build-only [BYTES [CALLS]]
#
# BYTES defaults to 268435456 (256 MiB), CALLS to 5. Fails if no GPU is
# visible (the probe of utils/run-gpu-tests.sh), so that a run that
# measured nothing cannot pass; --build-only stops after building, which
# works without a GPU. CUDA_HOME (default /usr/local/cuda) locates
# libcudart.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

build_only=0
if [[ ${1:-} == --build-only ]]; then
  build_only=1
  shift
fi
bytes=${1:-268435456}
calls=${2:-5}

cd "$(dirname "$0")/../.."
BUILD_DIR=${ETCOPY_BUILD_DIR:-build}
LLVM_BIN=/usr/lib/llvm-22/bin
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CUDART=$CUDA_HOME/lib64/libcudart.so
if [[ ! -x $BUILD_DIR/bin/etcopy-opt ]]; then
  utils/setup.sh
fi
if [[ ! -e $CUDART ]]; then
  echo "gpu-bandwidth: no CUDA runtime at $CUDART (set CUDA_HOME)" >&2
  exit 1
fi

if ((!build_only)); then
  # The same probe as test/lit.cfg.py's cuda-gpu feature.
  if ! python3 utils/cuda-device-visible.py "$CUDART"; then
    echo "gpu-bandwidth: no CUDA device is visible here" >&2
    exit 1
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bandwidth.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 utils/transfer-performance/generate.py large --bytes "$bytes" \
  --calls "$calls" -o "$work"

for variant in pageable pinned; do
  options="=pinned-host-memory=false"
  defines=()
  if [[ $variant == pinned ]]; then
    options=""
    # The raw cudaMemcpy baseline runs in the pinned variant's process.
    defines+=(-DTRANSFER_PERFORMANCE_RAW_BASELINE)
  fi
  "$BUILD_DIR/bin/etcopy-opt" "$work/large.mlir" "--etcopy-to-cuda$options" \
    | "$LLVM_BIN/mlir-translate" --mlir-to-llvmir -o "$work/$variant.ll"
  "$LLVM_BIN/clang" -O2 -Wno-override-module -c "$work/$variant.ll" \
    -o "$work/$variant.o"
  "$LLVM_BIN/clang" -O2 "${defines[@]}" -Ilib/Runtime/CudaSim -Itest/Execution/Inputs \
    "$work/large.c" "$work/$variant.o" -o "$work/$variant.exe" "$CUDART" \
    -Wl,-rpath,"$(dirname "$CUDART")"
done
if ((build_only)); then
  echo "gpu-bandwidth: built the pageable and pinned programs against $CUDART"
  exit 0
fi

echo "gpu-bandwidth: $bytes bytes up and down, $calls timed calls each"
for variant in pageable pinned; do
  echo "== generated code, $variant host buffers"
  "$work/$variant.exe"
done
