// The compile-time benchmark (utils/compile-time-benchmark, whose figures
// are in docs/CompileTime.md) at small sizes, as a check of growth order:
// from 1 000 to 10 000 delegates, copy groups or buffers, the time of each
// pass may grow at most 40-fold. A linear pass grows about 10-fold (up to
// 20-fold here, as larger IR misses caches more); each superlinear step
// removed from these passes made it grow 100-fold or more, or run past the
// one-minute timeout. Each time is the least of three runs, taken in rounds
// over both sizes so that a change of load on the machine affects both
// alike: it would have to slow down every run of the larger size, and none
// of the smaller, by 2x to fail the check.
// RUN: %python %etcopy_src_root/utils/compile-time-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --sizes 1000,10000 \
// RUN:   --repeat 3 --statistic min --no-reference --max-growth 40 \
// RUN:   --timeout 60 \
// RUN:   --measure "delegate-chain | --etcopy-propagate-device" \
// RUN:   --measure "groups-tensor | --etcopy-optimize-transfers" \
// RUN:   --measure "buffers-overlapping | --etcopy-plan-device-memory" \
// RUN:   --measure "buffers-all-live | --etcopy-plan-device-memory" \
// RUN:   | FileCheck %s

// CHECK: | --etcopy-propagate-device on delegate-chain | 10000 |
// CHECK: | --etcopy-optimize-transfers on groups-tensor | 10000 |
// CHECK: | --etcopy-plan-device-memory on buffers-overlapping | 10000 |
// CHECK: | --etcopy-plan-device-memory on buffers-all-live | 10000 |
// CHECK-NOT: FAIL
// CHECK: OK: every time grows at most 40-fold per 10x more input
