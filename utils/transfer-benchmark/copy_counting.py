# ===- copy_counting.py - Count copies in etcopy IR, lowered code, traces -=== #
#
# The three ways the transfer benchmark and the copy-bound checker count
# host<->device copies, kept in one place so that they agree:
#
#   count_copy_ops        etcopy.h2d / etcopy.d2h ops in etcopy-opt output
#                         (static: each op once);
#   count_copy_call_sites copy call sites in the LLVM-dialect code that
#                         --etcopy-to-cuda produces, per function, leaving
#                         out the runtime support functions the lowering
#                         emits;
#   parse_trace           copy API calls a run executed, from the CUDA
#                         simulator's trace (ETCOPY_CUDA_SIM_TRACE=1).
#
# Only the Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Copy counting shared by transfer_benchmark.py and check_copy_bound.py."""

import re
from dataclasses import dataclass, field
from typing import Dict

# The CUDA Runtime copy functions a lowering may call, and the checked
# wrappers of the runtime support that the CUDA lowering calls instead
# (__etcopy_memcpy wraps one cudaMemcpyAsync, __etcopy_memcpy_batch one
# cudaMemcpyBatchAsync, __etcopy_memcpy_peer one cudaMemcpyPeerAsync). A
# call of etcopy's strided-copy helper is one copy, whatever the number of
# calls it makes; a batch is one call, whatever the number of its copies. A
# call of __etcopy_memcpy_xN, which consecutive copies of a stream share,
# is N copy call sites: it makes N calls of cudaMemcpyAsync.
COPY_APIS = ("cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpyBatchAsync",
             "cudaMemcpyPeerAsync")
COPY_WRAPPERS = ("__etcopy_memcpy", "__etcopy_memcpy_strided",
                 "__etcopy_memcpy_batch", "__etcopy_memcpy_peer")
COPY_CALLEES = COPY_APIS + COPY_WRAPPERS
SEQUENCE_WRAPPER = re.compile(r"__etcopy_memcpy_x(\d+)")

COPY_OP = re.compile(r"(?<![\w.])etcopy\.(h2d|d2h|d2d)\b")
FUNCTION = re.compile(r"^(\s*)llvm\.func\b[^@]*@([\w$.-]+)\(.*\{\s*$")
CALL = re.compile(r"\bllvm\.call @([\w$.-]+)\(")


def count_copy_ops(mlir: str) -> int:
    """The etcopy.h2d and etcopy.d2h ops of `mlir` (custom or generic
    form), each counted once."""
    return sum(1 for line in mlir.splitlines()
               for _ in COPY_OP.finditer(line.split("//")[0]))


PUBLIC_FUNCTION = re.compile(r"^\s*func\.func @[\w$.-]+\(")
RETURN = re.compile(r"^\s*(?:func\.)?return (.*?) : (.*)$")


def count_returned_device_arguments(mlir: str) -> int:
    """The device-typed values that public functions of `mlir` (as
    etcopy-opt prints it) return straight from their arguments. Each costs
    one device-to-device copy in the lowered code: with MLIR's
    ownership-based deallocation a caller owns every buffer a function
    returns, so a function returns a copy of a buffer it does not own."""
    count, public = 0, False
    for line in mlir.splitlines():
        if line.lstrip().startswith("func.func"):
            public = bool(PUBLIC_FUNCTION.match(line))
            continue
        match = RETURN.match(line)
        if not public or not match:
            continue
        operands = [o.strip() for o in match.group(1).split(",")]
        types = re.split(r",\s*(?=tensor<|memref<|[a-z]\w*\b)",
                         match.group(2))
        count += sum(1 for operand, type in zip(operands, types)
                     if operand.startswith("%arg") and "#etcopy.device<cuda"
                     in type)
    return count


def is_runtime_support(function: str) -> bool:
    """Functions the CUDA lowering emits into every module: the checked
    wrappers (__etcopy_memcpy, ...), the strided-copy helper, their
    internal helpers (__etcopy.report, ...), the error policy."""
    return function.startswith("__etcopy") or function == "etcopy_cuda_error"


def count_copy_call_sites(llvm_mlir: str) -> Dict[str, int]:
    """Copy call sites per function of LLVM-dialect `llvm_mlir`, runtime
    support functions left out (a copy inside the strided-copy helper is
    counted by the call of the helper, the N copies of a call of
    __etcopy_memcpy_xN N times)."""
    sites: Dict[str, int] = {}
    function, indent = None, None
    for line in llvm_mlir.splitlines():
        if function is None:
            if match := FUNCTION.match(line):
                indent, function = match.groups()
                if is_runtime_support(function):
                    function = "<support>"
                else:
                    sites.setdefault(function, 0)
            continue
        if line.rstrip() == indent + "}":
            function = None
            continue
        if function == "<support>":
            continue
        for match in CALL.finditer(line):
            if match.group(1) in COPY_CALLEES:
                sites[function] += 1
            elif sequence := SEQUENCE_WRAPPER.fullmatch(match.group(1)):
                sites[function] += int(sequence.group(1))
    return sites


# ===----------------------------------------------------------------------=== #
# The simulator's trace
# ===----------------------------------------------------------------------=== #

# A copy call, its arguments, its error if it failed, and for an accepted
# copy the path the simulator classified it as (" [h2d_pageable]").
TRACE = re.compile(r"^etcopy-cuda-sim: trace: (cudaMemcpy\w*)\((.*)\)"
                   r"( -> \w+)?(?: \[[^\]]*\])?$")
BYTES = re.compile(r"\b(\d+) bytes\b")
BATCH_COPIES = re.compile(r"^(\d+) copies\b")
WIDTH_HEIGHT = re.compile(r"\bwidth=(\d+), height=(\d+)\b")
KIND = re.compile(r"\b(HostToHost|HostToDevice|DeviceToHost|DeviceToDevice|"
                  r"Default)\b")


@dataclass
class TraceCount:
    """Copies that succeeded in a traced run, their bytes, and the copy API
    calls that made them (a batch is one call of several copies)."""
    copies: int = 0
    bytes: int = 0
    calls: int = 0
    by_kind: Dict[str, int] = field(default_factory=dict)


def parse_trace(stderr: str) -> TraceCount:
    """Counts the copies (cudaMemcpy, cudaMemcpyAsync, cudaMemcpy2D,
    cudaMemcpy2DAsync, each copy of a cudaMemcpyBatchAsync, ...) of a run
    with ETCOPY_CUDA_SIM_TRACE=1. Calls that failed (` -> cudaError...`)
    are not counted; a 2-D copy moves width x height bytes; the copies of
    a batch, whose direction the runtime infers, are of kind "batch", a
    peer copy is of kind "DeviceToDevice"."""
    count = TraceCount()
    for line in stderr.splitlines():
        match = TRACE.match(line)
        if not match or match.group(3):
            continue
        arguments = match.group(2)
        copies = 1
        if size := WIDTH_HEIGHT.search(arguments):
            moved = int(size.group(1)) * int(size.group(2))
        elif size := BYTES.search(arguments):
            moved = int(size.group(1))
        else:
            raise ValueError(f"unrecognised copy in the trace: {line}")
        if match.group(1) == "cudaMemcpyBatchAsync":
            copies = int(BATCH_COPIES.search(arguments).group(1))
            kind = "batch"
        elif match.group(1).startswith("cudaMemcpyPeer"):
            kind = "DeviceToDevice"
        else:
            kind = KIND.search(arguments)
            kind = kind.group(1) if kind else "unknown"
        count.copies += copies
        count.bytes += moved
        count.calls += 1
        count.by_kind[kind] = count.by_kind.get(kind, 0) + copies
    return count
