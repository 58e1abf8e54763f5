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
#              --etcopy-optimize-transfers` leaves (counted in its output);
#   lower bound one copy per value and place it must reach (a move between
#              GPUs goes through the host: two copies).
#
# Counts are dynamic: a copy inside a loop counts once per iteration. Only
# the Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Transfer-count benchmark for etcopy's placement passes."""

import argparse
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

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

    def mlir(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + \
            self.element + ">"

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

def emit_mlir(program: Program) -> str:
    lines = [f"// {program.name}: {program.description}"]
    for callee, (device, inputs, results) in program.functions.items():
        signature = "(" + ", ".join(t.mlir() for t in inputs) + ") -> " + \
            ("(" + ", ".join(t.mlir() for t in results) + ")")
        attrs = f" attributes {{etcopy.device = #etcopy.device<{device}>}}" \
            if device else ""
        lines.append(f"func.func private @{callee}{signature}{attrs}")

    args = ", ".join(f"%{a.name}: {a.type.mlir()}" for a in program.args)
    results = ", ".join(r.type.mlir() for r in program.returns)
    lines.append(f"func.func @main({args}) -> ({results}) {{")
    trip_counts = sorted({s.trips for s in walk_loops(program.body)})
    if trip_counts:
        lines.append("  %c0 = arith.constant 0 : index")
        lines.append("  %c1 = arith.constant 1 : index")
        for trips in trip_counts:
            lines.append(f"  %trips{trips} = arith.constant {trips} : index")
    emit_block(program.body, lines, "  ")
    operands = ", ".join(f"%{r.name}" for r in program.returns)
    lines.append(f"  return {operands} : {results}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def walk_loops(body: List[Stmt]):
    for stmt in body:
        if isinstance(stmt, Loop):
            yield stmt
            yield from walk_loops(stmt.body)


def emit_block(body: List[Stmt], lines: List[str], indent: str) -> None:
    for stmt in body:
        if isinstance(stmt, Call):
            args = ", ".join(f"%{a.name}" for a in stmt.args)
            types = ", ".join(a.type.mlir() for a in stmt.args)
            results = ", ".join(r.type.mlir() for r in stmt.results)
            defs = ", ".join(f"%{r.name}" for r in stmt.results)
            lines.append(f"{indent}{defs} = func.call @{stmt.callee}({args})"
                         f" : ({types}) -> ({results})")
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
        lines.append(header + " {")
        emit_block(stmt.body, lines, indent + "  ")
        if carried:
            nexts = ", ".join(f"%{c.next.name}" for c in carried)
            lines.append(f"{indent}  scf.yield {nexts} : {types}")
        lines.append(f"{indent}}}")


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
    `needs`; a move between devices goes through the host."""
    others = needs - {home}
    to_devices = len(others - {HOST})
    via_host = home != HOST and bool(others)
    return to_devices + (1 if via_host else 0)


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

ETCOPY_PASSES = ["--etcopy-propagate-device", "--etcopy-optimize-transfers"]

CONSTANT = re.compile(r"(%[\w$.#-]+) = arith\.constant (\d+) : index")
FOR = re.compile(r"scf\.for %[\w$.#-]+ = (%[\w$.#-]+) to (%[\w$.#-]+) "
                 r"step (%[\w$.#-]+)")
COPY = re.compile(r"etcopy\.(h2d|d2h) %[\w$.#-]+ : tensor<([^>]*)>")


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
# Driver
# ===----------------------------------------------------------------------=== #

def format_bytes(count: int) -> str:
    """Exact: KiB when whole, bytes otherwise."""
    if count % 1024 == 0:
        return f"{count // 1024:,} KiB"
    return f"{count:,} B"


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=4,
                        help="delegates per program; loops run 4x size "
                        "iterations (default: 4)")
    parser.add_argument("--emit", metavar="DIR",
                        help="also write each program (and etcopy's "
                        "output) to DIR")
    parser.add_argument("--check", action="store_true",
                        help="fail unless etcopy meets the lower bound on "
                        "every program")
    parser.add_argument("--expect-in", metavar="FILE",
                        help="fail unless FILE contains the report verbatim "
                        "(keeps docs/TransferBenchmark.md current)")
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
    for make in PROGRAMS:
        program = make(args.size)
        mlir = emit_mlir(program)
        output = run_etcopy(command, mlir)
        if args.emit:
            os.makedirs(args.emit, exist_ok=True)
            with open(os.path.join(args.emit, program.name + ".mlir"),
                      "w") as f:
                f.write(mlir)
            with open(os.path.join(args.emit, program.name + ".etcopy.mlir"),
                      "w") as f:
                f.write(output)
        naive, executorch = naive_and_executorch(program)
        etcopy = count_etcopy(output)
        bound = lower_bound(program)
        meets = (etcopy.copies, etcopy.bytes) == (bound.copies, bound.bytes)
        if not meets:
            failures.append(program.name)
        rows.append((program, naive, executorch, etcopy, bound, meets))

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
        if failures:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
