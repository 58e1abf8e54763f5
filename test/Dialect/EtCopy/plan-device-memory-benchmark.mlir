// The memory-planning benchmark (utils/memory-planning-benchmark, whose
// full-size table is in docs/MemoryPlanning.md) at a small size: in every
// case, planning leaves one device allocation per arena per call (plus one
// per execution of a dynamically sized buffer), as the CUDA simulator counts
// them, and the arenas lie between the peak live bytes and the bytes
// requested.
// RUN: %python %etcopy_src_root/utils/memory-planning-benchmark/benchmark.py \
// RUN:   --etcopy-opt %etcopy_tools/etcopy-opt --runner "%run_sim" \
// RUN:   --scale small --check | FileCheck %s

// CHECK: | chain | 16 | 16 → 1 | 1 (cuda:0) |
// CHECK: | chain-mixed | 16 | 16 → 1 | 1 (cuda:0) |
// CHECK: | diamonds | 25 | 25 → 1 | 1 (cuda:0) |
// CHECK: | skips | 11 | 11 → 1 | 1 (cuda:0) |
// CHECK: | loop | 3 | 17 → 1 | 1 (cuda:0) |
// CHECK: | two-devices | 16 | 16 → 2 | 2 (cuda:0, cuda:1) |
// CHECK: | mixed | 27 | 30 → 3 | 2 (cuda:0, cuda:1) |
// CHECK: | random | 48 | 48 → 1 | 1 (cuda:0) |
// CHECK-NOT: FAIL
// CHECK: OK: one device allocation per arena in every case
