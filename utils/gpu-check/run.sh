#!/usr/bin/env bash
#===- run.sh - Run the GPU check bundle ----------------------------------===#
#
# The one command of a GPU check: runs every program of the bundle this
# script sits in (the GPU variants of the execution tests, the round-trip
# sweep, the runtime's unit tests, the transfer benchmarks, then
# compute-sanitizer's memcheck on a subset where it is installed and
# works), each under a time limit, and writes one archive of the results
# for utils/gpu-check/check.py on the CPU machine:
#
#   bash gpu-check/run.sh [--out DIR] [--budget SECONDS] [--simulator]
#
# DIR defaults to $OUT (set on a lent GPU machine), else ./gpu-check-out;
# it receives gpu-check-results.tar.gz and gpu-check-summary.txt only. The
# whole run stops starting programs after --budget seconds (default 270;
# 3600 with --simulator).
# --simulator runs the same executables against the CUDA simulator (sim/,
# first on LD_LIBRARY_PATH; --sim-devices, default 2): what CI does.
# Needs bash and python3 only.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
exec python3 "$(cd "$(dirname "$0")" && pwd)/run.py" "$@"
