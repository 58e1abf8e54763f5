// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 2 --check etcopy-opt | FileCheck %s
// RUN: %python %etcopy_src_root/utils/transfer-benchmark/transfer_benchmark.py --size 4 --expect-in %etcopy_src_root/docs/TransferBenchmark.md etcopy-opt > /dev/null

// The transfer benchmark (docs/TransferBenchmark.md) at a small size: on
// every generated program, etcopy-propagate-device followed by
// etcopy-optimize-transfers executes exactly the lower bound of copies and
// bytes (the script fails otherwise), so placement cannot regress. The
// second run keeps the committed results table current.

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
