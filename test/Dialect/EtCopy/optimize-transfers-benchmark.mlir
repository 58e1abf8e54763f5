// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 2 --check etcopy-opt | FileCheck %s
// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 4 --run --check \
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

// At run time every placement executes exactly the copies counted in the
// IR: the lowering adds none.
// RUNTIME: | program (size 4), run time | naive | ExecuTorch | etcopy | run time = static |
// RUNTIME: | alternating | 8 (128 KiB) | 8 (128 KiB) | 8 (128 KiB) | yes |
// RUNTIME: | loop | 48 (33,280 KiB) | 48 (33,280 KiB) | 3 (2,080 KiB) | yes |
// RUNTIME-NOT: | NO
// RUNTIME: check alternating at run time: every run-time count equals its static count
// RUNTIME-NEXT: check fan-out at run time: every run-time count equals its static count
// RUNTIME-NEXT: check chain at run time: every run-time count equals its static count
// RUNTIME-NEXT: check loop at run time: every run-time count equals its static count
// RUNTIME-NEXT: check loop-host-step at run time: every run-time count equals its static count
// RUNTIME-NEXT: check two-gpus at run time: every run-time count equals its static count
// RUNTIME-NEXT: check pipeline-two-gpus at run time: every run-time count equals its static count
// RUNTIME-NEXT: check decoder at run time: every run-time count equals its static count
