#!/usr/bin/env bash
#===- setup.sh - Install dependencies, configure and build etcopy --------===#
#
# On a fresh Debian 12 machine: installs the LLVM/MLIR 22 packages etcopy
# builds against (when run as root; otherwise prints the command to run),
# configures the build in ./build (or $ETCOPY_BUILD_DIR) with CMake + Ninja,
# and builds everything. Safe to rerun: it only does what is missing.
# Arguments are extra CMake options for the first configuration, e.g.
# `ETCOPY_BUILD_DIR=build-sanitize utils/setup.sh -DETCOPY_BUILD_FUZZERS=ON`
# (what utils/sanitize.sh runs). The compilers are LLVM 22's clang unless
# $ETCOPY_CC and $ETCOPY_CXX name others (CI also builds with GCC 12, the
# system compiler that the README's manual configuration picks).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${ETCOPY_BUILD_DIR:-build}
LLVM_PREFIX=/usr/lib/llvm-22
PACKAGES=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22
          lld-22 ninja-build cmake python3 libgtest-dev valgrind
          libclang-rt-22-dev gcc g++)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "etcopy setup: missing Debian packages: ${missing[*]}" >&2
    echo "etcopy setup: install them as root with:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "etcopy setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

echo "etcopy setup: packages ready (${SECONDS}s)"
start=$SECONDS

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="${ETCOPY_CC:-$LLVM_PREFIX/bin/clang}" \
    -DCMAKE_CXX_COMPILER="${ETCOPY_CXX:-$LLVM_PREFIX/bin/clang++}" \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=$LLVM_PREFIX/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM_PREFIX/bin/lit \
    "$@"
fi
cmake --build "$BUILD_DIR"
echo "etcopy setup: $BUILD_DIR configured and built ($((SECONDS - start))s)"
