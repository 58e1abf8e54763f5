#!/usr/bin/env bash
#===- simulate.sh - Build the GPU check bundle and check it on the simulator =#
#
# What CI runs so that the bundle cannot rot between GPU loans: builds it
# (build.py, from etcopy's build directory), runs it with --simulator (the
# same executables and run.sh as on a GPU, the simulator standing in for
# libcudart) and checks the results (check.py), which prints the report and
# fails if anything failed.
#
#   utils/gpu-check/simulate.sh [RESULTS_DIR]
#
# ETCOPY_BUILD_DIR selects the build directory (default: build). The
# archive is kept in RESULTS_DIR when one is given.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${ETCOPY_BUILD_DIR:-build}
python3 utils/gpu-check/build.py --build-dir "$BUILD_DIR" \
  --output "$BUILD_DIR/gpu-check"
if [[ $# -ge 1 ]]; then
  results=$1
  mkdir -p "$results"
else
  results=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-sim.XXXXXX")
  trap 'rm -rf "$results"' EXIT
fi
bash "$BUILD_DIR/gpu-check/run.sh" --simulator --out "$results"
python3 utils/gpu-check/check.py "$results/gpu-check-results.tar.gz"
