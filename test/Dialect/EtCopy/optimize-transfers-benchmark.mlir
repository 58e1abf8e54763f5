// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 2 --check etcopy-opt | FileCheck %s
// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 4 --run --check \
// RUN:   --xfail loop --xfail decoder \
// RUN:   --runner "%run_sim" --cc %cc --cuda-sim %etcopy_cuda_sim --cuda-sim-include %cuda_sim_include \
// RUN:   --expect-in %etcopy_src_root/docs/TransferBenchmark.md etcopy-opt | FileCheck %s --check-prefix=RUNTIME

// The transfer benchmark (docs/TransferBenchmark.md) at a small size: on
// every generated program, etcopy-propagate-device followed by
// etcopy-optimize-transfers executes exactly the lower bound of copies and
// bytes (the script fails otherwise), so placement cannot regress. The
// second run lowers every program in its three placements (naive and
// ExecuTorch-style as explicit copies, etcopy through the default
// --etcopy-to-cuda), runs them on the CUDA simulator with C callees, counts
// the copy calls in the trace, and keeps both committed tables current.

// CHECK: | program (size 2) | naive | ExecuTorch | etcopy | lower bound | etcopy = bound |
// CHECK-NOT: | NO |
// CHECK: check alternating: etcopy meets the lower bound
// CHECK-NEXT: check fan-out: etcopy meets the lower bound
// CHECK-NEXT: check chain: etcopy meets the lower bound
// CHECK-NEXT: check loop: etcopy meets the lower bound
// CHECK-NEXT: check loop-host-step: etcopy meets the lower bound
// CHECK-NEXT: check two-gpus: etcopy meets the lower bound
// CHECK-NEXT: check pipeline-two-gpus: etcopy meets the lower bound
// CHECK-NEXT: check decoder: etcopy meets the lower bound

// At run time every placement executes the copies counted in the IR, except
// etcopy on the two programs that carry a delegate result around an scf.for:
// etcopy-bufferize copies the yielded delegate result into a fresh device
// buffer every iteration (the delegate contract says it is fresh already).
// XFAIL until the compiler is fixed; the script fails (XPASS) once the copy
// is gone, so that the tables in the doc are regenerated. Minimal case:
// test/Execution/delegate-loop-state.mlir.
// RUNTIME: | program (size 4), run time | naive | ExecuTorch | etcopy | run time = static |
// RUNTIME: | alternating | 8 (128 KiB) | 8 (128 KiB) | 8 (128 KiB) | yes |
// RUNTIME: | loop | 48 (33,280 KiB) | 48 (33,280 KiB) | 19 (2,336 KiB) | NO: etcopy +16 (256 KiB), 16 device-to-device |
// RUNTIME: check alternating at run time: every run-time count equals its static count
// RUNTIME-NEXT: check fan-out at run time: every run-time count equals its static count
// RUNTIME-NEXT: check chain at run time: every run-time count equals its static count
// RUNTIME-NEXT: check loop at run time: XFAIL (etcopy +16 (256 KiB), 16 device-to-device)
// RUNTIME-NEXT: check loop-host-step at run time: every run-time count equals its static count
// RUNTIME-NEXT: check two-gpus at run time: every run-time count equals its static count
// RUNTIME-NEXT: check pipeline-two-gpus at run time: every run-time count equals its static count
// RUNTIME-NEXT: check decoder at run time: XFAIL (etcopy +16 (256 KiB), 16 device-to-device)
