#!/usr/bin/env bash
#===- run-gpu-tests.sh - Run the GPU-gated tests on a machine with a GPU -===#
#
# Builds etcopy (utils/setup.sh) and runs the tests that use the real CUDA
# runtime: every execution test runs its `%if cuda-gpu` lines against
# libcudart, the link test runs the linked binary, and the runtime library's
# CUDA allocator tests stop skipping. Prints lit's summary and fails if the
# machine shows no GPU, so a run that tested nothing cannot pass.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
utils/setup.sh
BUILD_DIR=${ETCOPY_BUILD_DIR:-build}
# The same probe as test/lit.cfg.py's cuda-gpu feature.
if ! python3 utils/cuda-device-visible.py; then
  echo "run-gpu-tests: no CUDA device is visible here" >&2
  exit 1
fi
/usr/lib/llvm-22/bin/lit -v "$BUILD_DIR/test/Execution" \
  "$BUILD_DIR/test/Runtime" "$@"
