// Growth order of the etcopy passes on the shapes that once made them
// superlinear (utils/compile-time-benchmark; figures and history in
// docs/CompileTime.md): etcopy-propagate-device on a chain of delegate
// calls, etcopy-optimize-transfers on groups of copies around delegate
// calls, etcopy-plan-device-memory on buffers each live across the next 8
// allocations and on buffers all live at once. The pipelines are checked
// by test/Pipelines/compile-time-pipelines.test (and, with host glue,
// test/Tools/compile-time-alternating-glue.test), nesting depth by
// test/Pipelines/compile-time-loop-nest.test.
//
// Work is counted, not timed (benchmark.py --count instructions): the
// instructions each whole etcopy-opt command executes under valgrind
// (cachegrind, threading off), less those of the same command on the
// case at N = 1 (process start, dialect loading, the pass's set-up). The
// count is exact and the same every run whatever the load on the machine,
// so one run per size does and the bound can sit close to linear: from
// N to 10 N each count may grow at most 12-fold (linear is 10; the count
// per delegate, group or buffer may grow 1.2x). Measured 2026-12-05, from
// 1 000 to 10 000: etcopy-propagate-device 109.1 M -> 1 094.4 M
// instructions (10.0), etcopy-optimize-transfers 299.9 M -> 3 013.4 M
// (10.0), etcopy-plan-device-memory on buffers all live 210.3 M ->
// 1 441.8 M (6.8: at 1 000 its size order packs the 500 000 overlapping
// pairs, at 10 000 their 50 M pass its limit of 2^20 and it is skipped);
// from 3 000 to 30 000 on overlapping buffers 373.2 M -> 3 748.5 M (10.0).
//
// Each superlinear step docs/CompileTime.md lists as removed from these
// passes fails it (measured in time before they were removed, since the
// old passes are not built here): etcopy-propagate-device on the chain and
// etcopy-optimize-transfers on the groups took 0.89 s and 0.30 s at 1 000
// and more than 120 s at 10 000, past the 300 s timeout under valgrind;
// etcopy-plan-device-memory's pairwise packing grew 63-fold per 10x on
// buffers all live from 1 000 to 10 000, and on overlapping buffers
// 16-fold from 1 000 to 10 000 (too close to the bound, hence the larger
// sizes there) and 154-fold from 10 000 to 30 000: about 46-fold from
// 3 000 to 30 000. test/Tools/compile-time-benchmark-checks.test shows
// the check failing on a quadratic count.
//
// It runs twelve commands under valgrind (four measurements at N = 1 and
// two sizes), two at a time: 88 s of CPU time, 68 s on the 2 cores under a
// load average of 4.5 (so about 45 s on idle ones); 5 to 7 s of each
// command is valgrind reading libMLIR's symbols. Valgrind cannot run
// sanitized builds.
// REQUIRES: valgrind
// RUN: %python %etcopy_src_root/utils/compile-time-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --sizes 1000,10000 \
// RUN:   --count instructions --jobs 2 --no-reference --max-growth 12 \
// RUN:   --timeout 300 \
// RUN:   --measure "delegate-chain | --etcopy-propagate-device" \
// RUN:   --measure "groups-tensor | --etcopy-optimize-transfers" \
// RUN:   --measure "buffers-all-live | --etcopy-plan-device-memory" \
// RUN:   | FileCheck %s
// RUN: %python %etcopy_src_root/utils/compile-time-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --sizes 3000,30000 \
// RUN:   --count instructions --jobs 2 --no-reference --max-growth 12 \
// RUN:   --timeout 300 \
// RUN:   --measure "buffers-overlapping | --etcopy-plan-device-memory" \
// RUN:   | FileCheck %s --check-prefix=OVERLAP

// CHECK: | passes | N | instructions (M) |
// CHECK: | --etcopy-propagate-device on delegate-chain | 1000 |
// CHECK: | --etcopy-propagate-device on delegate-chain | 10000 |
// CHECK: | --etcopy-optimize-transfers on groups-tensor | 1000 |
// CHECK: | --etcopy-optimize-transfers on groups-tensor | 10000 |
// CHECK: | --etcopy-plan-device-memory on buffers-all-live | 1000 |
// CHECK: | --etcopy-plan-device-memory on buffers-all-live | 10000 |
// CHECK-NOT: FAIL
// CHECK: OK: every instruction count grows at most 12-fold per 10x more input

// OVERLAP: | passes | N | instructions (M) |
// OVERLAP: | --etcopy-plan-device-memory on buffers-overlapping | 3000 |
// OVERLAP: | --etcopy-plan-device-memory on buffers-overlapping | 30000 |
// OVERLAP-NOT: FAIL
// OVERLAP: OK: every instruction count grows at most 12-fold per 10x more input
