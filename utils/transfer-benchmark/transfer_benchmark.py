#!/usr/bin/env python3
# ===- transfer_benchmark.py - Copies needed by partitioned programs -----=== #
#
# Generates partitioned-model programs (delegates on one or two GPUs, host
# stages, fan-out, chains, loops) of a configurable size and reports, for
# each, the host<->device copies executed and the bytes they move:
#
#   naive      ExecuTorch's per-boundary insertion: an h2d before every
#              delegate tensor input, a d2h after every used output;
#   executorch the same followed by ExecuTorch's round-trip elision (an h2d
#              of a d2h from the same device, in the same graph, is
#              replaced by the device value; dead d2h copies are dropped);
#   etcopy     what `etcopy-opt --etcopy-propagate-device
#              --etcopy-optimize-transfers --canonicalize` (the placement
#              stage of --etcopy-to-cuda) leaves (counted in its output);
#   lower bound one copy per value and place it must reach (a move between
#              GPUs is one device-to-device copy, etcopy.d2d).
#
# Counts are dynamic: a copy inside a loop counts once per iteration. With
# --run, each program is also lowered to CUDA Runtime calls in the naive,
# ExecuTorch and etcopy placements (the first two written out as explicit
# copies), run on the CUDA simulator with generated C callees, and the copy
# calls of the simulator's trace are counted (copy_counting.py). Only the
# Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Transfer-count benchmark for etcopy's placement passes."""

import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from copy_counting import TraceCount, parse_trace  # noqa: E402

HOST = "cpu"

ELEMENT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
                 "f16": 2, "bf16": 2, "f32": 4, "f64": 8}


# ===----------------------------------------------------------------------=== #
# Program model
# ===----------------------------------------------------------------------=== #

@dataclass(frozen=True)
class TensorType:
    shape: Tuple[int, ...]
    element: str

    def mlir(self, device: Optional[str] = None) -> str:
        encoding = f", #etcopy.device<{device}>" if device else ""
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + \
            self.element + encoding + ">"

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * ELEMENT_BYTES[self.element]


@dataclass(eq=False)
class Value:
    name: str
    type: TensorType


@dataclass(eq=False)
class Call:
    """A call to a delegate (device set) or to a host function (None)."""
    callee: str
    device: Optional[str]
    args: List[Value]
    results: List[Value]


@dataclass(eq=False)
class Carried:
    """One loop-carried value: `iter` starts as `init`, then takes `next`
    (set after the body is built); `result` is its last value."""
    iter: Value
    init: Value
    result: Value
    next: Optional[Value] = None


@dataclass(eq=False)
class Loop:
    trips: int
    carried: List[Carried]
    body: List[Union[Call, "Loop"]] = field(default_factory=list)


Stmt = Union[Call, Loop]


@dataclass
class Program:
    name: str
    description: str
    args: List[Value] = field(default_factory=list)
    body: List[Stmt] = field(default_factory=list)
    returns: List[Value] = field(default_factory=list)
    functions: Dict[str, Tuple[Optional[str], List[TensorType],
                               List[TensorType]]] = field(
                                   default_factory=dict)


class Builder:
    """Builds a Program with unique SSA names."""

    def __init__(self, name: str, description: str):
        self.program = Program(name, description)
        self.blocks: List[List[Stmt]] = [self.program.body]
        self.counter = 0

    def _value(self, prefix: str, type: TensorType) -> Value:
        self.counter += 1
        return Value(f"{prefix}{self.counter}", type)

    def arg(self, type: TensorType) -> Value:
        value = self._value("arg", type)
        self.program.args.append(value)
        return value

    def call(self, callee: str, device: Optional[str], args: List[Value],
             result_types: List[TensorType]) -> List[Value]:
        signature = (device, [a.type for a in args], list(result_types))
        known = self.program.functions.setdefault(callee, signature)
        assert known == signature, f"@{callee} called with two signatures"
        results = [self._value("v", t) for t in result_types]
        self.blocks[-1].append(Call(callee, device, list(args), results))
        return results

    def device(self, callee: str, device: str, args: List[Value],
               result: TensorType) -> Value:
        return self.call(callee, device, args, [result])[0]

    def host(self, callee: str, args: List[Value],
             result: TensorType) -> Value:
        return self.call(callee, None, args, [result])[0]

    def loop(self, trips: int, inits: List[Value]) -> Loop:
        self.counter += 1
        name = f"loop{self.counter}"
        carried = []
        for i, init in enumerate(inits):
            result_name = name if len(inits) == 1 else f"{name}#{i}"
            carried.append(Carried(self._value("it", init.type), init,
                                   Value(result_name, init.type)))
        loop = Loop(trips, carried)
        self.blocks[-1].append(loop)
        self.blocks.append(loop.body)
        return loop

    def end_loop(self, loop: Loop, nexts: List[Value]) -> List[Value]:
        self.blocks.pop()
        for carried, next_value in zip(loop.carried, nexts):
            carried.next = next_value
        return [c.result for c in loop.carried]

    def finish(self, returns: List[Value]) -> Program:
        self.program.returns = list(returns)
        return self.program


# ===----------------------------------------------------------------------=== #
# Programs
# ===----------------------------------------------------------------------=== #

ACT = TensorType((8, 1024), "f16")       # activations, 16 KiB
WEIGHT = TensorType((1024, 1024), "f16")  # weights, 2 MiB
FEATURES = TensorType((1024, 1024), "f16")  # a large input, 2 MiB
LOGITS = TensorType((8, 4096), "f16")    # logits, 64 KiB
TOKENS = TensorType((8,), "i64")         # sampled tokens, 64 B
GPU0, GPU1 = "cuda:0", "cuda:1"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def alternating(n: int) -> Program:
    b = Builder("alternating", f"{plural(n, 'device delegate')} alternating "
                f"with {plural(n, 'host stage')}")
    x = b.arg(ACT)
    for k in range(n):
        x = b.device(f"device_stage{k}", GPU0, [x], ACT)
        x = b.host(f"host_stage{k}", [x], ACT)
    return b.finish([x])


def fan_out(n: int) -> Program:
    b = Builder("fan-out", f"one 2 MiB input to {plural(n, 'delegate')} on "
                "one GPU, their results combined on the host")
    x = b.arg(FEATURES)
    outs = [b.device(f"head{k}", GPU0, [x], ACT) for k in range(n)]
    acc = outs[0]
    for k, out in enumerate(outs[1:]):
        acc = b.host(f"combine{k}", [acc, out], ACT)
    return b.finish([acc])


def chain(n: int) -> Program:
    b = Builder("chain", f"{plural(n, 'delegate')} on one GPU in a chain, "
                "each with its weight")
    x = b.arg(ACT)
    weights = [b.arg(WEIGHT) for _ in range(n)]
    for k, w in enumerate(weights):
        x = b.device(f"layer{k}", GPU0, [x, w], ACT)
    return b.finish([x])


def loop_on_device(n: int) -> Program:
    trips = 4 * n
    b = Builder("loop", f"{plural(trips, 'iteration')} updating a state on "
                "the GPU with a loop-invariant weight")
    state, w = b.arg(ACT), b.arg(WEIGHT)
    loop = b.loop(trips, [state])
    s = loop.carried[0].iter
    s = b.device("step", GPU0, [s, w], ACT)
    (result,) = b.end_loop(loop, [s])
    return b.finish([result])


def loop_host_step(n: int) -> Program:
    trips = 4 * n
    b = Builder("loop-host-step", f"{plural(trips, 'iteration')} of a GPU step "
                "followed by a host step on the state")
    state, w = b.arg(ACT), b.arg(WEIGHT)
    loop = b.loop(trips, [state])
    s = loop.carried[0].iter
    y = b.device("step", GPU0, [s, w], ACT)
    s = b.host("post", [y], ACT)
    (result,) = b.end_loop(loop, [s])
    return b.finish([result])


def two_gpus(n: int) -> Program:
    b = Builder("two-gpus", f"one input to two chains of "
                f"{plural(n, 'delegate')}, one per GPU, merged on cuda:1")
    x = b.arg(ACT)
    a, c = x, x
    for k in range(n):
        a = b.device(f"left{k}", GPU0, [a], ACT)
        c = b.device(f"right{k}", GPU1, [c], ACT)
    merged = b.device("merge", GPU1, [a, c], ACT)
    return b.finish([merged])


def pipeline_two_gpus(n: int) -> Program:
    b = Builder("pipeline-two-gpus", f"{plural(2 * n, 'delegate')} alternating "
                "between cuda:0 and cuda:1")
    x = b.arg(ACT)
    for k in range(2 * n):
        x = b.device(f"stage{k}", GPU0 if k % 2 == 0 else GPU1, [x], ACT)
    return b.finish([x])


def decoder(n: int) -> Program:
    trips = 4 * n
    b = Builder("decoder", f"{plural(trips, 'decode step')}: "
                f"{plural(n, 'layer')} and a head on the GPU, sampling and "
                "embedding on the host")
    hidden = b.arg(ACT)
    table = b.arg(WEIGHT)
    weights = [b.arg(WEIGHT) for _ in range(n)]
    head = b.arg(WEIGHT)
    loop = b.loop(trips, [hidden])
    h = loop.carried[0].iter
    for k, w in enumerate(weights):
        h = b.device(f"layer{k}", GPU0, [h, w], ACT)
    logits = b.device("head", GPU0, [h, head], LOGITS)
    token = b.host("sample", [logits], TOKENS)
    embedding = b.host("embed", [token, table], ACT)
    h = b.device("residual", GPU0, [h, embedding], ACT)
    (result,) = b.end_loop(loop, [h])
    return b.finish([result])


PROGRAMS = [alternating, fan_out, chain, loop_on_device, loop_host_step,
            two_gpus, pipeline_two_gpus, decoder]


# ===----------------------------------------------------------------------=== #
# MLIR emission
# ===----------------------------------------------------------------------=== #

NAIVE, EXECUTORCH = "naive", "executorch"


def emit_mlir(program: Program, placement: Optional[str] = None,
              runnable: bool = False) -> str:
    """The program as a module of tensor-level functions.

    Without `placement`, as a partitioner hands it over: delegates declared
    with `etcopy.device`, no copies, every tensor on the host; etcopy
    places the copies. With `placement` (NAIVE or EXECUTORCH), the copies
    that strategy places are written out as functional etcopy.h2d/d2h and
    delegates take and return device tensors, so that lowering with
    `place-copies=false optimize-transfers=false` executes exactly them.

    `runnable` makes a module mlir-runner can run against C
    implementations of the callees: declarations get
    `llvm.emit_c_interface`, the program becomes `@method` and a `@main`
    calls it on zero-filled inputs."""
    lines = [f"// {program.name}: {program.description}" +
             (f" ({placement} placement)" if placement else "")]
    for callee, (device, inputs, results) in program.functions.items():
        place = device if placement else None
        signature = "(" + ", ".join(t.mlir(place) for t in inputs) + \
            ") -> (" + ", ".join(t.mlir(place) for t in results) + ")"
        attrs = ([f"etcopy.device = #etcopy.device<{device}>"]
                 if device else []) + \
            (["llvm.emit_c_interface"] if runnable else [])
        attrs = f" attributes {{{', '.join(attrs)}}}" if attrs else ""
        lines.append(f"func.func private @{callee}{signature}{attrs}")

    method = "method" if runnable else "main"
    args = ", ".join(f"%{a.name}: {a.type.mlir()}" for a in program.args)
    results = ", ".join(r.type.mlir() for r in program.returns)
    lines.append(f"func.func @{method}({args}) -> ({results}) {{")
    trip_counts = sorted({s.trips for s in walk_loops(program.body)})
    if trip_counts:
        lines.append("  %c0 = arith.constant 0 : index")
        lines.append("  %c1 = arith.constant 1 : index")
        for trips in trip_counts:
            lines.append(f"  %trips{trips} = arith.constant {trips} : index")
    Emitter(program, placement, lines).block(program.body, program, "  ")
    operands = ", ".join(f"%{r.name}" for r in program.returns)
    lines.append(f"  return {operands} : {results}")
    lines.append("}")
    if runnable:
        emit_driver(program, method, lines)
    return "\n".join(lines) + "\n"


def emit_driver(program: Program, method: str, lines: List[str]) -> None:
    """`@main`: calls `@method` on zero-filled host inputs."""
    lines.append("func.func @main() {")
    for arg in program.args:
        zero = "0.0" if arg.type.element.startswith(("f", "bf")) else "0"
        lines.append(f"  %zero_{arg.name} = arith.constant {zero} : "
                     f"{arg.type.element}")
        lines.append(f"  %empty_{arg.name} = tensor.empty() : "
                     f"{arg.type.mlir()}")
        lines.append(f"  %{arg.name} = linalg.fill ins(%zero_{arg.name} : "
                     f"{arg.type.element}) outs(%empty_{arg.name} : "
                     f"{arg.type.mlir()}) -> {arg.type.mlir()}")
    args = ", ".join(f"%{a.name}" for a in program.args)
    types = ", ".join(a.type.mlir() for a in program.args)
    results = ", ".join(r.type.mlir() for r in program.returns)
    lines.append(f"  func.call @{method}({args}) : ({types}) -> ({results})")
    lines.append("  return")
    lines.append("}")


def walk_loops(body: List[Stmt]):
    for stmt in body:
        if isinstance(stmt, Loop):
            yield stmt
            yield from walk_loops(stmt.body)


class Emitter:
    """Emits statements, with the copies of `placement` if set."""

    def __init__(self, program: Program, placement: Optional[str],
                 lines: List[str]):
        self.placement = placement
        self.facts = Uses(program) if placement else None
        self.lines = lines
        self.copies = 0

    def h2d(self, value: Value, device: str, indent: str) -> str:
        self.copies += 1
        name = f"h2d{self.copies}"
        self.lines.append(f"{indent}%{name} = etcopy.h2d %{value.name} : "
                          f"{value.type.mlir()} -> {value.type.mlir(device)}")
        return name

    def call(self, stmt: Call, graph, indent: str) -> None:
        device = stmt.device if self.placement else None
        operands = []
        for arg in stmt.args:
            if device is None:
                operands.append(arg.name)
            elif self.placement == EXECUTORCH and \
                    self.facts.producer[arg] == (device, graph):
                # Round-trip elision: the device value itself.
                operands.append(f"{arg.name}_d")
            else:
                operands.append(self.h2d(arg, device, indent))
        defs = ", ".join(f"%{r.name}" + ("_d" if device else "")
                         for r in stmt.results)
        self.lines.append(
            f"{indent}{defs} = func.call @{stmt.callee}("
            + ", ".join(f"%{o}" for o in operands) + ") : ("
            + ", ".join(a.type.mlir(device) for a in stmt.args) + ") -> ("
            + ", ".join(r.type.mlir(device) for r in stmt.results) + ")")
        if device is None:
            return
        for result in stmt.results:
            uses = self.facts.uses.get(result, [])
            if self.placement == EXECUTORCH:
                # Dropped when every use is an elided h2d.
                uses = [u for u in uses if u != ("call", device, graph)]
            if uses:
                self.lines.append(
                    f"{indent}%{result.name} = etcopy.d2h %{result.name}_d : "
                    f"{result.type.mlir(device)} -> {result.type.mlir()}")

    def block(self, body: List[Stmt], graph, indent: str) -> None:
        for stmt in body:
            if isinstance(stmt, Call):
                self.call(stmt, graph, indent)
                continue
            carried = stmt.carried
            name = carried[0].result.name.split("#")[0]
            defs = f"%{name}:{len(carried)} = " if len(carried) > 1 else \
                f"%{name} = " if carried else ""
            iter_args = ", ".join(f"%{c.iter.name} = %{c.init.name}"
                                  for c in carried)
            types = ", ".join(c.init.type.mlir() for c in carried)
            header = f"{indent}{defs}scf.for %i{name} = %c0 to " \
                f"%trips{stmt.trips} step %c1"
            if carried:
                header += f" iter_args({iter_args}) -> ({types})"
            self.lines.append(header + " {")
            self.block(stmt.body, stmt, indent + "  ")
            if carried:
                nexts = ", ".join(f"%{c.next.name}" for c in carried)
                self.lines.append(f"{indent}  scf.yield {nexts} : {types}")
            self.lines.append(f"{indent}}}")


# ===----------------------------------------------------------------------=== #
# Models: naive, ExecuTorch, lower bound
# ===----------------------------------------------------------------------=== #

@dataclass
class Count:
    copies: int = 0
    bytes: int = 0

    def add(self, type: TensorType, times: int = 1) -> None:
        self.copies += times
        self.bytes += times * type.bytes


class Uses:
    """Static facts: for each value, its producer and its uses, each with
    the graph (top level or loop body) it is in. Loop-carried values and
    loop results are produced by the loop (on the host, for ExecuTorch)."""

    def __init__(self, program: Program):
        self.producer: Dict[Value, Tuple[Optional[str], object]] = {}
        self.uses: Dict[Value, List[Tuple[str, Optional[str], object]]] = {}
        for arg in program.args:
            self.producer[arg] = (None, program)
        self._walk(program.body, program)
        for value in program.returns:
            self._use(value, "return", None, program)

    def _use(self, value, kind, device, graph):
        self.uses.setdefault(value, []).append((kind, device, graph))

    def _walk(self, body: List[Stmt], graph) -> None:
        for stmt in body:
            if isinstance(stmt, Call):
                for arg in stmt.args:
                    self._use(arg, "call", stmt.device, graph)
                for result in stmt.results:
                    self.producer[result] = (stmt.device, graph)
                continue
            for c in stmt.carried:
                self._use(c.init, "loop", None, graph)
                self.producer[c.iter] = (None, stmt)
                self.producer[c.result] = (None, graph)
            self._walk(stmt.body, stmt)
            for c in stmt.carried:
                self._use(c.next, "yield", None, stmt)


def naive_and_executorch(program: Program) -> Tuple[Count, Count]:
    """ExecuTorch's insertion, without and with its round-trip elision."""
    facts = Uses(program)
    naive, elided = Count(), Count()

    def visit(body: List[Stmt], graph, times: int) -> None:
        for stmt in body:
            if isinstance(stmt, Loop):
                visit(stmt.body, stmt, times * stmt.trips)
                continue
            if stmt.device is None:
                continue
            for arg in stmt.args:
                naive.add(arg.type, times)
                # Elided when the argument is a d2h from the same device
                # in the same graph.
                if facts.producer[arg] != (stmt.device, graph):
                    elided.add(arg.type, times)
            for result in stmt.results:
                uses = facts.uses.get(result, [])
                if not uses:
                    continue
                naive.add(result.type, times)
                # The d2h stays unless every use is an elided h2d.
                if any(use != ("call", stmt.device, graph) for use in uses):
                    elided.add(result.type, times)

    visit(program.body, program, 1)
    return naive, elided


def copies_to_reach(home: str, needs: set) -> int:
    """Copies to make a value at `home` available at every place of
    `needs`: one per other place, a move between devices being one
    device-to-device copy (etcopy.d2d)."""
    return len(needs - {home})


def lower_bound(program: Program) -> Count:
    """Runs the program abstractly; every produced value (every iteration's
    one inside loops) must reach each place where it is used."""
    homes: List[Tuple[str, TensorType]] = []
    needs: List[set] = []
    env: Dict[Value, int] = {}

    def produce(value: Value, place: str) -> None:
        env[value] = len(homes)
        homes.append((place, value.type))
        needs.append(set())

    def use(value: Value, place: str) -> None:
        needs[env[value]].add(place)

    def run(body: List[Stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, Call):
                place = stmt.device or HOST
                for arg in stmt.args:
                    use(arg, place)
                for result in stmt.results:
                    produce(result, place)
                continue
            for c in stmt.carried:
                env[c.iter] = env[c.init]
            for _ in range(stmt.trips):
                run(stmt.body)
                for c in stmt.carried:
                    env[c.iter] = env[c.next]
            for c in stmt.carried:
                env[c.result] = env[c.iter]

    for arg in program.args:
        produce(arg, HOST)
    run(program.body)
    for value in program.returns:
        use(value, HOST)

    bound = Count()
    for (home, type), need in zip(homes, needs):
        bound.add(type, copies_to_reach(home, need))
    return bound


# ===----------------------------------------------------------------------=== #
# etcopy: run the passes, count the copies in the output
# ===----------------------------------------------------------------------=== #

# The placement stage of --etcopy-to-cuda: the canonicalizer turns a move
# between devices through the host into etcopy.d2d.
ETCOPY_PASSES = ["--etcopy-propagate-device", "--etcopy-optimize-transfers",
                 "--canonicalize"]

CONSTANT = re.compile(r"(%[\w$.#-]+) = arith\.constant (\d+) : index")
FOR = re.compile(r"scf\.for %[\w$.#-]+ = (%[\w$.#-]+) to (%[\w$.#-]+) "
                 r"step (%[\w$.#-]+)")
COPY = re.compile(r"etcopy\.(h2d|d2h|d2d) %[\w$.#-]+ : tensor<([^>]*)>")


def count_etcopy(mlir: str) -> Count:
    """Counts the functional copies of `mlir` (the output of etcopy-opt),
    each once per iteration of the scf.for loops around it."""
    constants: Dict[str, int] = {}
    multipliers: List[int] = []
    count = Count()
    for line in mlir.splitlines():
        stripped = line.strip()
        if match := CONSTANT.search(stripped):
            constants[match.group(1)] = int(match.group(2))
        if stripped.startswith("}"):
            multipliers.pop()
        if match := COPY.search(stripped):
            *dims, element = match.group(2).split(", ")[0].split("x")
            type = TensorType(tuple(int(d) for d in dims), element)
            count.add(type, math.prod(multipliers))
        if stripped.endswith("{"):
            trips = 1
            if match := FOR.search(stripped):
                lower, upper, step = (constants[g] for g in match.groups())
                trips = max(0, -(-(upper - lower) // step))
            multipliers.append(trips)
    return count


def run_etcopy(command: List[str], mlir: str) -> str:
    process = subprocess.run([*command, *ETCOPY_PASSES], input=mlir,
                             capture_output=True, text=True)
    if process.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{process.stderr}")
    return process.stdout


# ===----------------------------------------------------------------------=== #
# Run time: lower each placement, run it on the CUDA simulator
# ===----------------------------------------------------------------------=== #

C_PRELUDE = """\
// Callees of the generated program, through MLIR's C interface. A device
// delegate allocates its result on its device (cudaMalloc) and zeroes it
// (cudaMemset); it calls no copy function, so that the simulator's trace
// shows only the copies of the generated code. A host function returns
// zeroed host memory. The generated code frees both.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "CudaRuntimeSubset.h"

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[]; // sizes[rank], then strides[rank]
} MemRef;

static void check(cudaError_t error, const char *call) {
  if (error != cudaSuccess) {
    fprintf(stderr, "callee: %s failed: %s\\n", call,
            cudaGetErrorString(error));
    exit(1);
  }
}

static void describe(MemRef *result, void *data, int rank,
                     const int64_t *sizes) {
  result->allocated = result->aligned = data;
  result->offset = 0;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    result->sizesAndStrides[i] = sizes[i];
    result->sizesAndStrides[rank + i] = stride;
    stride *= sizes[i];
  }
}

static void deviceResult(MemRef *result, int device, int rank,
                         const int64_t *sizes, size_t bytes) {
  int previous;
  void *data;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMalloc(&data, bytes), "cudaMalloc");
  check(cudaMemset(data, 0, bytes), "cudaMemset");
  // cudaMemset may return before the memory is set: a delegate's work is
  // complete when it returns (docs/Delegates.md).
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  check(cudaSetDevice(previous), "cudaSetDevice");
  describe(result, data, rank, sizes);
}

static void hostResult(MemRef *result, int rank, const int64_t *sizes,
                       size_t bytes) {
  void *data = calloc(1, bytes);
  if (!data) {
    fprintf(stderr, "callee: out of host memory\\n");
    exit(1);
  }
  describe(result, data, rank, sizes);
}
"""


def emit_c(program: Program) -> str:
    """C implementations of the program's delegates and host functions."""
    lines = [C_PRELUDE]
    for callee, (device, inputs, results) in program.functions.items():
        assert len(results) == 1, f"@{callee}: one result expected"
        result = results[0]
        params = ", ".join(["MemRef *result"] +
                           [f"MemRef *arg{i}" for i in range(len(inputs))])
        sizes = ", ".join(str(d) for d in result.shape)
        where = f"on {device}" if device else "on the host"
        lines.append(f"// @{callee} {where}: "
                     f"{', '.join(t.mlir() for t in inputs)} -> "
                     f"{result.mlir()}")
        lines.append(f"void _mlir_ciface_{callee}({params}) {{")
        lines.append(f"  static const int64_t sizes[] = {{{sizes}}};")
        if device:
            ordinal = int(device.partition(":")[2] or 0)
            lines.append(f"  deviceResult(result, {ordinal}, "
                         f"{len(result.shape)}, sizes, {result.bytes});")
        else:
            lines.append(f"  hostResult(result, {len(result.shape)}, sizes, "
                         f"{result.bytes});")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


@dataclass
class Runtime:
    """How to lower, build and run a program."""
    etcopy_opt: List[str]
    runner: List[str]
    cc: str
    cuda_sim: str
    cuda_sim_include: str
    workdir: str


PLACEMENTS = (NAIVE, EXECUTORCH, "etcopy")


def checked(command: List[str], what: str, **kwargs) -> Tuple[str, str]:
    process = subprocess.run(command, capture_output=True, text=True,
                             **kwargs)
    if process.returncode != 0:
        sys.exit(f"error: {what} failed ({' '.join(command)}):\n"
                 f"{process.stderr[-4000:]}")
    return process.stdout, process.stderr


def with_library(runner: List[str], library: str) -> List[str]:
    """The runner command with `library` added to its --shared-libs."""
    command = list(runner)
    for i, arg in enumerate(command):
        if arg.startswith("--shared-libs="):
            command[i] = f"{arg},{library}"
            return command
    return command + [f"--shared-libs={library}"]


def run_placements(program: Program, runtime: Runtime
                   ) -> Dict[str, TraceCount]:
    """Copies executed by each placement of `program` on the simulator:
    naive and ExecuTorch as explicit copies lowered with nothing
    optimised away, etcopy as the unplaced program through the default
    pipeline."""
    base = os.path.join(runtime.workdir, program.name)
    with open(base + ".c", "w") as f:
        f.write(emit_c(program))
    checked([runtime.cc, "-shared", "-fPIC", "-O1",
             f"-I{runtime.cuda_sim_include}", base + ".c", "-o",
             base + ".so", runtime.cuda_sim], "compiling the callees")
    counts = {}
    env = dict(os.environ, ETCOPY_CUDA_SIM_TRACE="1",
               ETCOPY_CUDA_SIM_DEVICES="2")
    for placement in PLACEMENTS:
        explicit = placement if placement != "etcopy" else None
        mlir = emit_mlir(program, explicit, runnable=True)
        pipeline = "--etcopy-to-cuda" + (
            "=place-copies=false optimize-transfers=false" if explicit
            else "")
        lowered, _ = checked([*runtime.etcopy_opt, pipeline],
                             f"lowering {program.name} ({placement})",
                             input=mlir)
        _, trace = checked(with_library(runtime.runner, base + ".so"),
                           f"running {program.name} ({placement})",
                           input=lowered, env=env)
        counts[placement] = parse_trace(trace)
    return counts


# ===----------------------------------------------------------------------=== #
# Driver
# ===----------------------------------------------------------------------=== #

def format_bytes(count: int) -> str:
    """Exact: KiB when whole, bytes otherwise."""
    if count % 1024 == 0:
        return f"{count // 1024:,} KiB"
    return f"{count:,} B"


def run_time_cell(static: Count, run: TraceCount) -> Tuple[str, str]:
    """The cell of a run-time count, and what differs from the static
    count ('' when nothing)."""
    cell = f"{run.copies} ({format_bytes(run.bytes)})"
    if (run.copies, run.bytes) == (static.copies, static.bytes):
        return cell, ""
    extra = f"+{run.copies - static.copies} " \
        f"({format_bytes(run.bytes - static.bytes)})"
    d2d = run.by_kind.get("DeviceToDevice", 0)
    if d2d:
        extra += f", {d2d} device-to-device"
    return cell, extra


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    llvm = "/usr/lib/llvm-22"
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=4,
                        help="delegates per program; loops run 4x size "
                        "iterations (default: 4)")
    parser.add_argument("--emit", metavar="DIR",
                        help="also write each program (and etcopy's "
                        "output) to DIR")
    parser.add_argument("--check", action="store_true",
                        help="fail unless etcopy meets the lower bound on "
                        "every program (and, with --run, unless every "
                        "run-time count equals its static count)")
    parser.add_argument("--xfail", action="append", default=[],
                        metavar="PROGRAM",
                        help="with --run --check: a program whose run-time "
                        "counts are known to differ (a compiler defect); "
                        "fails once they no longer do")
    parser.add_argument("--expect-in", metavar="FILE",
                        help="fail unless FILE contains the report verbatim "
                        "(keeps docs/TransferBenchmark.md current)")
    parser.add_argument("--run", action="store_true",
                        help="also lower each placement to CUDA calls, run "
                        "it on the CUDA simulator and count the copies it "
                        "executes")
    parser.add_argument("--runner", default=(
        f"{llvm}/bin/mlir-runner -e main --entry-point-result=void "
        f"--shared-libs={root}/build/lib/libetcopy_cuda_sim.so"),
        help="with --run: the mlir-runner command running @main against "
        "the simulator (default: %(default)s)")
    parser.add_argument("--cc", default=f"{llvm}/bin/clang",
                        help="with --run: the C compiler for the callees "
                        "(default: %(default)s)")
    parser.add_argument("--cuda-sim", default=os.path.join(
        root, "build", "lib", "libetcopy_cuda_sim.so"),
        help="with --run: the simulator library the callees link against")
    parser.add_argument("--cuda-sim-include", default=os.path.join(
        root, "lib", "Runtime", "CudaSim"),
        help="with --run: the folder of CudaRuntimeSubset.h")
    parser.add_argument("etcopy_opt", nargs=argparse.REMAINDER,
                        metavar="etcopy-opt ...",
                        help="the etcopy-opt command to run, with any extra "
                        "arguments (default: build/bin/etcopy-opt)")
    args = parser.parse_args()
    if args.size < 1:
        parser.error("--size must be at least 1")
    command = args.etcopy_opt or [os.path.join(root, "build", "bin",
                                               "etcopy-opt")]

    rows = []
    failures = []
    runs = {}
    with tempfile.TemporaryDirectory(prefix="transfer-benchmark-") as work:
        runtime = Runtime(command, shlex.split(args.runner), args.cc,
                          args.cuda_sim, args.cuda_sim_include, work)
        for make in PROGRAMS:
            program = make(args.size)
            mlir = emit_mlir(program)
            output = run_etcopy(command, mlir)
            if args.emit:
                os.makedirs(args.emit, exist_ok=True)
                for suffix, text in (
                        (".mlir", mlir), (".etcopy.mlir", output),
                        (".naive.mlir", emit_mlir(program, NAIVE)),
                        (".executorch.mlir", emit_mlir(program, EXECUTORCH)),
                        (".c", emit_c(program))):
                    with open(os.path.join(args.emit, program.name + suffix),
                              "w") as f:
                        f.write(text)
            naive, executorch = naive_and_executorch(program)
            # The explicit programs the run time executes place exactly
            # the copies the models count.
            for placement, model in ((NAIVE, naive),
                                     (EXECUTORCH, executorch)):
                emitted = count_etcopy(emit_mlir(program, placement))
                assert emitted == model, \
                    f"{program.name}: {placement} IR places {emitted}, " \
                    f"the model counts {model}"
            etcopy = count_etcopy(output)
            bound = lower_bound(program)
            meets = (etcopy.copies, etcopy.bytes) == \
                (bound.copies, bound.bytes)
            if not meets:
                failures.append(program.name)
            rows.append((program, naive, executorch, etcopy, bound, meets))
            if args.run:
                runs[program.name] = run_placements(program, runtime)

    report = [f"| program (size {args.size}) | naive | ExecuTorch | etcopy "
              "| lower bound | etcopy = bound |",
              "|---|---|---|---|---|---|"]
    for program, *counts, meets in rows:
        cells = [f"{c.copies} ({format_bytes(c.bytes)})" for c in counts]
        report.append(f"| {program.name} | " + " | ".join(cells) +
                      f" | {'yes' if meets else 'NO'} |")
    report.append("")
    for program, *_ in rows:
        report.append(f"- {program.name}: {program.description}")

    differences = {}
    if args.run:
        report += ["", f"| program (size {args.size}), run time | naive | "
                   "ExecuTorch | etcopy | run time = static |",
                   "|---|---|---|---|---|"]
        for program, naive, executorch, etcopy, _, _ in rows:
            cells, extras = [], []
            for placement, static in zip(PLACEMENTS,
                                         (naive, executorch, etcopy)):
                cell, extra = run_time_cell(static, runs[program.name][placement])
                cells.append(cell)
                if extra:
                    extras.append(f"{placement} {extra}")
            if extras:
                differences[program.name] = extras
            report.append(f"| {program.name} | " + " | ".join(cells) + " | " +
                          ("NO: " + "; ".join(extras) if extras else "yes") +
                          " |")
    report = "\n".join(report) + "\n"
    print(report, end="")

    if args.expect_in:
        with open(args.expect_in) as f:
            if report not in f.read():
                print(f"error: {args.expect_in} does not contain this "
                      "report; paste it in", file=sys.stderr)
                return 1
    if args.check:
        print()
        for program, *_, meets in rows:
            print(f"check {program.name}: "
                  f"{'etcopy meets the lower bound' if meets else 'FAIL'}")
        if args.run:
            names = [program.name for program, *_ in rows]
            unknown = set(args.xfail) - set(names)
            if unknown:
                sys.exit(f"error: --xfail names no program: "
                         f"{', '.join(sorted(unknown))}")
            for name in names:
                expected = name in args.xfail
                if name in differences:
                    verdict = "XFAIL" if expected else "FAIL"
                    if not expected:
                        failures.append(name)
                    print(f"check {name} at run time: {verdict} ("
                          + "; ".join(differences[name]) + ")")
                elif expected:
                    failures.append(name)
                    print(f"check {name} at run time: XPASS (every "
                          "run-time count equals its static count; remove "
                          "its --xfail)")
                else:
                    print(f"check {name} at run time: every run-time count "
                          "equals its static count")
        if failures:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
