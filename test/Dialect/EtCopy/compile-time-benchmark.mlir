// The compile-time benchmark (utils/compile-time-benchmark, whose figures
// are in docs/CompileTime.md) at small sizes, as a check of growth order:
// from 2 000 to 20 000 delegates, copy groups or buffers, the time of each
// pass relative to `--canonicalize --cse` on the same input may grow at
// most 4-fold. A linear pass keeps its ratio (measured: 0.7x to 1.5x
// growth); each superlinear step removed from these passes made the ratio
// grow 10-fold or more, or run past the one-minute timeout. The ratio, not
// the time, is checked: larger inputs miss the caches more and load on the
// machine slows larger runs more, which makes even the linear reference
// grow 13- to 35-fold here, but slows the pass and the reference alike.
// Each time is the least of three runs, interleaved with the reference.
// Both pipelines are checked too, on a chain of delegate calls (tensor
// level: bufferization, deallocation, the conversions) and on memref-level
// copy groups (measured: 0.5x to 1.6x growth of the ratio, sanitized
// build included).
// RUN: %python %etcopy_src_root/utils/compile-time-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --sizes 2000,20000 \
// RUN:   --repeat 3 --statistic min --max-ratio-growth 4 \
// RUN:   --timeout 60 \
// RUN:   --measure "delegate-chain | --etcopy-propagate-device" \
// RUN:   --measure "groups-tensor | --etcopy-optimize-transfers" \
// RUN:   --measure "buffers-overlapping | --etcopy-plan-device-memory" \
// RUN:   --measure "buffers-all-live | --etcopy-plan-device-memory" \
// RUN:   --measure "delegate-chain | --etcopy-to-cuda" \
// RUN:   --measure "groups-memref | --etcopy-to-cuda" \
// RUN:   --measure "delegate-chain | --etcopy-to-host" \
// RUN:   | FileCheck %s

// CHECK: | --etcopy-propagate-device on delegate-chain | 20000 |
// CHECK: | --etcopy-optimize-transfers on groups-tensor | 20000 |
// CHECK: | --etcopy-plan-device-memory on buffers-overlapping | 20000 |
// CHECK: | --etcopy-plan-device-memory on buffers-all-live | 20000 |
// CHECK: | --etcopy-to-cuda on delegate-chain | 20000 |
// CHECK: | --etcopy-to-cuda on groups-memref | 20000 |
// CHECK: | --etcopy-to-host on delegate-chain | 20000 |
// CHECK-NOT: FAIL
// CHECK: OK: every ratio to the reference grows at most 4-fold per 10x more input

// Nesting depth: a tensor threaded through 4 and then 14 nested scf.for
// loops. Upstream's One-Shot Bufferize is exponential in that depth (it
// recomputes the buffer type of every enclosing iter_arg, about 2x per
// level: 0.2 to 0.3 s at depth 16, 3.3 s at 20, docs/CompileTime.md), and
// so is any pipeline that runs it; the pipelines must grow no faster than
// it does alone, as the reference.
// RUN: %python %etcopy_src_root/utils/compile-time-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --sizes 4,14 \
// RUN:   --repeat 3 --statistic min --max-ratio-growth 4 --timeout 60 \
// RUN:   --reference "--one-shot-bufferize='bufferize-function-boundaries use-encoding-for-memory-space'" \
// RUN:   --measure "loop-nest | --etcopy-to-cuda" \
// RUN:   --measure "loop-nest | --etcopy-to-host" \
// RUN:   | FileCheck %s --check-prefix=NEST

// NEST: | --etcopy-to-cuda on loop-nest | 14 |
// NEST: | --etcopy-to-host on loop-nest | 14 |
// NEST-NOT: FAIL
// NEST: OK: every ratio to the reference grows at most 4-fold per 10x more input
