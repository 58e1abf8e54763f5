#!/usr/bin/env bash
#===- run-example.sh - Lower an etcopy example and run it ----------------===#
#
# Lowers an MLIR file (default: examples/round-trip.mlir) with
# `etcopy-opt --etcopy-to-cuda` and JIT-runs its @main with mlir-runner:
# against the real CUDA runtime when it reports a GPU, else against the
# CUDA runtime simulator (build/lib/libetcopy_cuda_sim.so).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${ETCOPY_BUILD_DIR:-build}
LLVM_PREFIX=/usr/lib/llvm-22
EXAMPLE=${1:-examples/round-trip.mlir}
CUDART=/usr/local/cuda/lib64/libcudart.so

runtime=$BUILD_DIR/lib/libetcopy_cuda_sim.so
where="the CUDA runtime simulator (no GPU found)"
if [[ -e $CUDART ]] && python3 - "$CUDART" <<'PY' 2>/dev/null; then
import ctypes, sys
count = ctypes.c_int(0)
runtime = ctypes.CDLL(sys.argv[1])
sys.exit(0 if runtime.cudaGetDeviceCount(ctypes.byref(count)) == 0
         and count.value > 0 else 1)
PY
  runtime=$CUDART
  where="the GPU, through $CUDART"
fi

# A sanitized build (utils/sanitize.sh): mlir-runner is not instrumented
# but loads the instrumented simulator, so it needs the ASan runtime first
# (docs/Reliability.md).
runner=("$LLVM_PREFIX/bin/mlir-runner")
if grep -qs '^ETCOPY_ENABLE_SANITIZERS:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  asan=$("$LLVM_PREFIX/bin/clang" -print-file-name=libclang_rt.asan-x86_64.so)
  export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
  runner=(env LD_PRELOAD="$asan" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
          "${runner[@]}")
fi

echo "== $EXAMPLE: etcopy-opt --etcopy-to-cuda, run on $where"
"$BUILD_DIR/bin/etcopy-opt" "$EXAMPLE" --etcopy-to-cuda |
  "${runner[@]}" -e main --entry-point-result=void \
    --shared-libs="$runtime,$LLVM_PREFIX/lib/libmlir_runner_utils.so,$LLVM_PREFIX/lib/libmlir_c_runner_utils.so"
