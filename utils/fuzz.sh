#!/usr/bin/env bash
#===- fuzz.sh - Run etcopy's fuzz targets for a given time ----------------===#
#
# Usage: utils/fuzz.sh [-t SECONDS] [-j JOBS] [TARGET...]
#
# TARGET is `pipeline` (etcopy-pipeline-fuzzer) or `runtime`
# (etcopy-runtime-fuzzer); default both. Each runs for SECONDS (default 600)
# with JOBS libFuzzer worker processes (default 1), one after the other. The
# targets come from the sanitizer build (utils/sanitize.sh's
# ./build-sanitize, or $ETCOPY_SANITIZE_BUILD_DIR), set up and built here if
# needed; only the fuzz targets are rebuilt.
#
# Per target, under BUILD/fuzz/TARGET/: corpus/ (grows across runs: a later
# run starts from what earlier ones found), seeds/ (utils/fuzz-seed-corpus.py,
# rewritten each run), artifacts/ (crash-*, timeout-*, oom-*: reproducers)
# and run-N/ (libFuzzer's output: fuzz.log, or fuzz-J.log per job). The
# script fails when a run leaves an artifact or stops early. Limits (see
# docs/Reliability.md for why):
#   -timeout=10        an input running over 10 s is a hang;
#   -rss_limit_mb=4096 and -malloc_limit_mb=2048;
#   -max_len=16384     above the largest seed (14 KiB), below inputs that
#                      are slow by nature (One-Shot Bufferize is exponential
#                      in scf nesting depth, in stock mlir-opt too).
# Extra libFuzzer flags can be given in $ETCOPY_FUZZ_FLAGS.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${ETCOPY_SANITIZE_BUILD_DIR:-build-sanitize}
SECONDS_PER_TARGET=600
JOBS=1
while getopts "t:j:h" opt; do
  case $opt in
    t) SECONDS_PER_TARGET=$OPTARG ;;
    j) JOBS=$OPTARG ;;
    *) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($# == 0)); then
  set -- pipeline runtime
fi

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  ETCOPY_BUILD_DIR=$BUILD_DIR utils/setup.sh -DETCOPY_BUILD_FUZZERS=ON
fi
if ! grep -q '^ETCOPY_BUILD_FUZZERS:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  echo "fuzz.sh: $BUILD_DIR was not configured with -DETCOPY_BUILD_FUZZERS=ON" >&2
  exit 1
fi
ninja -C "$BUILD_DIR" etcopy-pipeline-fuzzer etcopy-runtime-fuzzer

status=0
for target in "$@"; do
  case $target in
    pipeline)
      extra=(-dict="$ROOT/tools/etcopy-fuzz/etcopy.dict" -max_len=16384
             --etcopy-one-entry-per-input) ;;
    runtime) extra=(-max_len=4096) ;;
    *) echo "fuzz.sh: unknown target '$target' (pipeline or runtime)" >&2
       exit 2 ;;
  esac
  fuzzer=$ROOT/$BUILD_DIR/bin/etcopy-$target-fuzzer
  work=$ROOT/$BUILD_DIR/fuzz/$target
  mkdir -p "$work/corpus" "$work/artifacts"
  rm -rf "$work/seeds"
  utils/fuzz-seed-corpus.py "$target" "$work/seeds"
  run=1
  while [[ -e $work/run-$run ]]; do run=$((run + 1)); done
  mkdir -p "$work/run-$run"
  echo "fuzz.sh: $target for ${SECONDS_PER_TARGET}s, $JOBS job(s): $work/run-$run"
  args=(-max_total_time="$SECONDS_PER_TARGET" -timeout=10
        -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/" "${extra[@]}"
        ${ETCOPY_FUZZ_FLAGS:-})
  if ((JOBS > 1)); then
    # Each worker runs for the whole time and logs to fuzz-J.log.
    args+=(-jobs="$JOBS" -workers="$JOBS")
  fi
  before=$(find "$work/artifacts" -type f | wc -l)
  (cd "$work/run-$run" &&
   "$fuzzer" "${args[@]}" "$work/corpus" "$work/seeds" >fuzz.log 2>&1) ||
    status=1
  after=$(find "$work/artifacts" -type f | wc -l)
  # With jobs, fuzz.log repeats the workers' own logs: count those only.
  logs=("$work/run-$run/fuzz.log")
  if ((JOBS > 1)); then
    logs=("$work/run-$run"/fuzz-[0-9]*.log)
  fi
  executions=$(cat "${logs[@]}" |
    sed -n 's/^stat::number_of_executed_units: *//p' |
    awk '{ sum += $1 } END { print sum + 0 }')
  echo "fuzz.sh: $target: $executions executions;" \
       "corpus $(find "$work/corpus" -type f | wc -l) inputs"
  if ((after > before)); then
    echo "fuzz.sh: $target left $((after - before)) new artifact(s) in" \
         "$work/artifacts" >&2
    status=1
  fi
done
exit $status
