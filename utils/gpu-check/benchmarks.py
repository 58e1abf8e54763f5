# ===- benchmarks.py - The transfer benchmarks of the GPU check bundle ----=== #
#
# The one entry through which the bundle takes the transfer benchmarks of
# docs/TransferPerformance.md: `programs()` lists each program to build (the
# MLIR module and C harness of utils/transfer-performance/generate.py, the
# lowering options of the variant, as utils/transfer-performance/
# benchmark.py chooses them, and the harness's defines). The bundle links
# each against libcudart, runs it, and the checker prints the `time:` lines
# the harness prints (the median time of one call, CUDA initialised before
# the clock starts; `wall` on a GPU, `modelled` on the simulator) and checks
# its `check: ... data ok` line. build.py, run.py and check.py rely only on
# the fields of BenchProgram and on those two kinds of output lines.
#
# The sizes are the H200 run's (docs/GPUChecks.md): (a) 1000 copies of 64
# bytes, called 1000 times; (b) 256 MiB up and down, 5 calls; (c) 16
# delegates called 100 times on 64 KiB activations, each variant of the
# ablation, and 1 MiB of host data per delegate for three of them (where
# the H200 run found the defaults slower than ExecuTorch-style); (d) 64 MiB
# from cuda:0 to cuda:1 (two devices); (e) the chain of 16 delegates on the
# device, 100 calls, called directly and through a CUDA graph (cuda-graphs).
# Against the simulator (CI) they take
# about a minute of CPU, most of it in (b) and the 1 MiB chains.
#
# ===----------------------------------------------------------------------=== #
"""The transfer benchmark programs of the GPU check bundle."""

import os
import sys
from dataclasses import dataclass, field
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "transfer-performance"))
import benchmark  # noqa: E402
import generate  # noqa: E402


@dataclass
class BenchProgram:
    name: str
    description: str
    mlir: str
    c: str
    options: str             # of --etcopy-to-cuda
    devices: int = 1
    defines: List[str] = field(default_factory=list)
    timeout: int = 120


def programs() -> List[BenchProgram]:
    out = []
    # (a) Many small copies: a loop of cudaMemcpyAsync against batches, and
    # a stream per call against the persistent ones.
    mlir, c = generate.small(1000, 64, 1000)
    out.append(BenchProgram("small-loop", "(a) 1000 x 64 B uploads, 1000 "
                            "calls, batch-copies=false", mlir, c,
                            "batch-copies=false"))
    out.append(BenchProgram("small-batched", "(a) 1000 x 64 B uploads, 1000 "
                            "calls, batched (defaults)", mlir, c, ""))
    mlir, c = generate.small(1000, 64, 1000, per_call_streams=True)
    out.append(BenchProgram("small-per-call-streams", "(a) as small-batched,"
                            " a stream created per call", mlir, c, ""))
    # (b) Large copies, pageable against pinned; the pinned program also
    # times plain cudaMemcpy between buffers allocated once.
    mlir, c = generate.large(256 << 20, calls=5)
    out.append(BenchProgram("large-pageable", "(b) 256 MiB up and down, 5 "
                            "calls, pinned-host-memory=false", mlir, c,
                            "pinned-host-memory=false"))
    out.append(BenchProgram("large-pinned", "(b) 256 MiB up and down, 5 "
                            "calls, pinned (defaults), and raw cudaMemcpy",
                            mlir, c, "",
                            defines=["TRANSFER_PERFORMANCE_RAW_BASELINE"]))
    # (c) The chain of delegates: each step of the ablation, then the host
    # tensor sizes of the sweep for ExecuTorch-style, pageable and the
    # defaults (pinned).
    for index, variant in enumerate(benchmark.CHAIN_ABLATION):
        mlir, c = generate.chain(16, 100, 64 << 10, 4 << 10,
                                 variant.stream_ordered,
                                 variant.per_call_streams, variant.hoisted)
        out.append(BenchProgram(f"chain-{index}", "(c) 16 delegates x 100 "
                                f"calls, 4 KiB host input: {variant.label}",
                                mlir, c, variant.options))
    for input_bytes, tag in ((1 << 20, "1MiB"),):
        for short, (label, variant) in zip(
                ("executorch", "pageable", "defaults"),
                benchmark.CHAIN_SWEEP[:3]):
            mlir, c = generate.chain(16, 100, 64 << 10, input_bytes,
                                     variant.stream_ordered,
                                     variant.per_call_streams,
                                     variant.hoisted)
            out.append(BenchProgram(
                f"chain-{tag}-{short}", f"(c) 16 delegates x 100 calls, "
                f"{tag} host input: {label}", mlir, c, variant.options))
    # (d) A move between two GPUs.
    mlir, c = generate.peer(64 << 20)
    out.append(BenchProgram("peer", "(d) 64 MiB from cuda:0 to cuda:1 (one "
                            "peer copy)", mlir, c, "", devices=2))
    # (e) The chain on the device, without and with CUDA graphs.
    mlir, c = generate.graph_chain(16, 100, 64 << 10)
    out.append(BenchProgram("graphs-direct", "(e) 16 delegates x 100 calls "
                            "on the device, called directly", mlir, c,
                            "place-copies=false"))
    out.append(BenchProgram("graphs-captured", "(e) 16 delegates x 100 calls "
                            "on the device, cuda-graphs", mlir, c,
                            "place-copies=false cuda-graphs=true"))
    return out
