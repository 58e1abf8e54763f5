#!/usr/bin/env bash
#===- sanitize.sh - Build etcopy with ASan+UBSan and run every test -------===#
#
# Sets up (utils/setup.sh: packages, then a first configuration) a build in
# ./build-sanitize (or $ETCOPY_SANITIZE_BUILD_DIR) with
# ETCOPY_BUILD_FUZZERS=ON, which implies ETCOPY_ENABLE_SANITIZERS=ON: every
# etcopy library, tool, test program and the fuzz targets are compiled with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# instrumentation. Then it runs the whole lit suite against that build; any
# sanitizer report fails the test that produced it. Extra arguments go to
# lit (e.g. `utils/sanitize.sh --filter Execution`). Nothing is shared with
# ./build. See docs/Reliability.md.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${ETCOPY_SANITIZE_BUILD_DIR:-build-sanitize}

ETCOPY_BUILD_DIR=$BUILD_DIR utils/setup.sh -DETCOPY_BUILD_FUZZERS=ON
if (($#)); then
  export LIT_OPTS="${LIT_OPTS:-} $*"
fi
ninja -C "$BUILD_DIR" check-etcopy
