#!/usr/bin/env python3
# ===- sweep.py - Random round trips and strided layouts for GPU checks ---=== #
#
# Generates the round-trip sweep of the GPU check bundle: one MLIR module of
# cases, each a function that fills a host buffer, copies a view of it to
# the device (etcopy.h2d), optionally copies it between two device views
# (memref.copy, device to device), copies it back into a view of a host
# canvas (etcopy.d2h) and prints the whole canvas; and a C main that runs
# the case named on its command line, passing the sizes the module leaves
# dynamic so that the compiler cannot see them.
#
# The first cases are the fixed strided layouts of the first H200 run
# (../../docs/GPUChecks.md): a unit dimension with a small stride, a
# broadcast (stride 0), negative strides, overlapping windows, aliasing
# device views (even and odd elements of one device buffer). The rest are
# drawn from a seeded generator: element types f16, bf16, f32, f64, i8,
# i16, i32, i64; ranks 0 to 4; sizes including 0 and 1, each static or
# dynamic; sources with padded, broadcast, negative and overlapping strides;
# device and host destinations that are dense allocations (dynamic ones
# when the sizes are) or strided views of larger buffers. Destinations never
# overlap themselves, so every case has one right answer: the canvas the
# host reference lowering (--etcopy-to-host) prints, which the bundle
# records when it is built. Everything outside the destination view keeps
# its sentinel, so a copy that writes too much shows.
#
#   sweep.py [--seed N] [--random N] -o DIR   writes DIR/sweep.mlir,
#                                              DIR/sweep-main.c, DIR/cases.json
#
# Only the Python standard library is used; the same seed gives the same
# files.
#
# ===----------------------------------------------------------------------=== #
"""Generates the round-trip sweep of the GPU check bundle."""

import argparse
import json
import os
import random
import sys
from dataclasses import asdict, dataclass, field
from typing import List, Optional

DEVICE = "#etcopy.device<cuda:0>"

# Element type -> (MLIR type, printMemref suffix, sentinel).
TYPES = {
    "f16": ("f16", "F16", -128),
    "bf16": ("bf16", "BF16", -128),
    "f32": ("f32", "F32", -128),
    "f64": ("f64", "F64", -128),
    # printMemrefI8 prints characters: values and sentinel are printable.
    "i8": ("i8", "I8", ord("#")),
    "i16": ("i16", "I16", -128),
    "i32": ("i32", "I32", -128),
    "i64": ("i64", "I64", -128),
}

# At most this many elements per view, and per buffer.
MAX_ELEMENTS = 512
MAX_SPAN = 4096


@dataclass
class View:
    """A strided view into a 1-D buffer of `base` elements."""
    base: int
    offset: int
    strides: List[int]

    def span(self, shape):
        return view_span(shape, self.strides, self.offset)


@dataclass
class Case:
    id: int
    name: str
    dtype: str
    shape: List[int]
    dynamic: List[bool]
    source: View
    # None: a dense device allocation (dynamic sizes where the shape has).
    device: Optional[View]
    # The view memref.copy copies the device data to before the download;
    # in the device buffer of `device` when `alias` (interleaved with it),
    # else in a buffer of its own.
    device_copy: Optional[View] = None
    alias: bool = False
    # None: a dense host allocation, copied into the start of the canvas.
    host: Optional[View] = None
    canvas: int = 1
    seed: int = 0
    notes: List[str] = field(default_factory=list)

    def describe(self):
        dims = ", ".join(f"?{n}" if d else str(n)
                         for n, d in zip(self.shape, self.dynamic))
        parts = [f"{self.dtype} [{dims}]",
                 f"source {layout(self.source)}",
                 "device " + (layout(self.device) if self.device else
                              "dense")]
        if self.device_copy:
            parts.append(("aliasing device view " if self.alias else
                          "device copy ") + layout(self.device_copy))
        parts.append("host " + (layout(self.host) if self.host else "dense"))
        return "; ".join(parts + self.notes)


def layout(view):
    return f"strides {view.strides} offset {view.offset} of {view.base}"


def view_span(shape, strides, offset):
    """(lowest, highest) element index a view touches, as if every size
    were at least 1."""
    low = high = offset
    for n, s in zip(shape, strides):
        extent = (max(n, 1) - 1) * s
        if extent < 0:
            low += extent
        else:
            high += extent
    return low, high


def contiguous_strides(shape):
    strides, running = [], 1
    for n in reversed(shape):
        strides.append(running)
        running *= max(n, 1)
    return list(reversed(strides))


def elements(shape):
    count = 1
    for n in shape:
        count *= n
    return count


def placed(shape, strides, rng, pad=3):
    """A view with these strides, shifted so that it starts at or after 0,
    in a buffer with up to `pad` spare elements before and after."""
    low, high = view_span(shape, strides, 0)
    before = rng.randint(0, pad)
    offset = before - low
    return View(base=offset + high + 1 + rng.randint(0, pad), offset=offset,
                strides=strides)


# ===----------------------------------------------------------------------=== #
# Drawing cases
# ===----------------------------------------------------------------------=== #

def source_strides(shape, rng):
    """Any layout a source may have: padded, broadcast, negative,
    overlapping (each dimension drawn on its own)."""
    strides = [0] * len(shape)
    inner = 1  # Elements spanned by the dimensions inside this one.
    for d in reversed(range(len(shape))):
        n = max(shape[d], 1)
        kind = rng.choice(["dense", "dense", "padded", "broadcast",
                           "negative", "overlap"])
        if n == 1:
            # A unit dimension's stride is never used to address: any
            # value, small ones included (as numpy and expand_shape make).
            stride = rng.choice([0, 1, 2, inner + 1, 7])
        elif kind == "dense":
            stride = inner
        elif kind == "padded":
            stride = inner + rng.randint(1, 3)
        elif kind == "broadcast":
            stride = 0
        elif kind == "negative":
            stride = -(inner + rng.choice([0, 0, 1]))
        else:  # Overlapping windows: a step smaller than what is inside.
            stride = rng.randint(1, inner) if inner > 1 else 1
        strides[d] = stride
        low, high = view_span(shape[d:], strides[d:], 0)
        inner = high - low + 1
    return strides


def disjoint_strides(shape, rng, allow_negative=True):
    """A layout whose elements are all distinct: a destination. Each
    dimension steps over everything inside it (plus padding), forwards or,
    sometimes, backwards."""
    strides = [0] * len(shape)
    inner = 1
    for d in reversed(range(len(shape))):
        if d == len(shape) - 1:
            step = rng.choice([1, 1, 1, 2, 3])
        else:
            step = inner + rng.choice([0, 0, 1, 2])
        if allow_negative and shape[d] > 1 and rng.random() < 0.15:
            step = -step
        strides[d] = step
        low, high = view_span(shape[d:], strides[d:], 0)
        inner = high - low + 1
    return strides


def random_shape(rng):
    rank = rng.choices([0, 1, 2, 3, 4], weights=[1, 4, 6, 4, 2])[0]
    while True:
        shape = [rng.choice([0, 1, 1, 2, 3, 4, 5, 7, 8, 16, 33])
                 for _ in range(rank)]
        # A zero dimension in about one case in six.
        if 0 in shape and rng.random() > 0.4:
            continue
        if elements(shape) <= MAX_ELEMENTS:
            return shape


def random_case(case_id, rng):
    dtype = rng.choice(sorted(TYPES))
    shape = random_shape(rng)
    dynamic = [rng.random() < 0.35 for _ in shape]
    source = placed(shape, source_strides(shape, rng), rng)
    device = None
    if rng.random() < 0.5:
        device = placed(shape, disjoint_strides(shape, rng), rng)
    device_copy, alias = None, False
    if rng.random() < 0.2:
        if device and rng.random() < 0.5 and shape:
            # Interleave with the device view: even and odd elements of
            # one buffer (every stride doubled, the copy one further on).
            device = View(base=2 * device.base + 2, offset=2 * device.offset,
                          strides=[2 * s for s in device.strides])
            device_copy = View(base=device.base, offset=device.offset + 1,
                               strides=device.strides)
            alias = True
        else:
            device_copy = placed(shape, disjoint_strides(shape, rng), rng)
    host = None
    if rng.random() < 0.6:
        host = placed(shape, disjoint_strides(shape, rng), rng)
        canvas = host.base
    else:
        canvas = max(elements(shape), 1) + rng.randint(0, 3)
    case = Case(id=case_id, name=f"random-{case_id}", dtype=dtype,
                shape=shape, dynamic=dynamic, source=source, device=device,
                device_copy=device_copy, alias=alias, host=host,
                canvas=canvas, seed=rng.randint(0, 1000))
    check_case(case)
    return case


def fixed_cases():
    """The layouts the first H200 run checked, one case each."""
    cases = []

    def add(name, dtype, shape, source, device=None, device_copy=None,
            alias=False, host=None, dynamic=None, note=None):
        canvas = host.base if host else max(elements(shape), 1)
        case = Case(id=len(cases), name=name, dtype=dtype, shape=shape,
                    dynamic=dynamic or [False] * len(shape), source=source,
                    device=device, device_copy=device_copy, alias=alias,
                    host=host, canvas=canvas, seed=len(cases),
                    notes=[note] if note else [])
        check_case(case)
        cases.append(case)

    add("unit-dimension-small-stride", "f32", [2, 1, 4],
        View(24, 0, [8, 1, 1]),
        note="a unit dimension whose stride is smaller than a row")
    add("broadcast-rows", "f32", [3, 4], View(24, 4, [0, 1]))
    add("broadcast-scalar", "i32", [2, 3], View(1, 0, [0, 0]))
    add("negative-strides", "f32", [3, 4], View(24, 23, [-6, -1]))
    add("negative-rows-dynamic", "f64", [4, 5], View(40, 30, [-10, 1]),
        dynamic=[True, False])
    add("overlapping-windows", "f32", [3, 4], View(24, 0, [1, 1]))
    add("overlapping-windows-2d", "i16", [4, 3, 3], View(20, 0, [2, 3, 1]))
    add("aliasing-device-views", "f32", [2, 4], View(24, 0, [4, 1]),
        device=View(18, 0, [8, 2]), device_copy=View(18, 1, [8, 2]),
        alias=True, note="even to odd elements of one device buffer")
    add("strided-device-and-host", "bf16", [3, 5], View(15, 0, [5, 1]),
        device=View(64, 3, [20, 3]), host=View(40, 38, [-13, -2]))
    add("zero-rows-dynamic", "f32", [0, 4], View(8, 0, [4, 1]),
        dynamic=[True, False], note="a dynamic size that is 0 at run time")
    add("zero-static", "i64", [3, 0], View(4, 0, [1, 1]),
        device=View(8, 0, [2, 1]))
    return cases


def check_case(case):
    """Asserts the invariants the expected data relies on."""
    views = [("source", case.source), ("device", case.device),
             ("device copy", case.device_copy), ("host", case.host)]
    for what, view in views:
        if view is None:
            continue
        low, high = view.span(case.shape)
        assert 0 <= low and high < view.base <= MAX_SPAN, (case, what)
        assert len(view.strides) == len(case.shape), (case, what)
    if case.host:
        assert case.canvas == case.host.base
    else:
        assert case.canvas >= max(elements(case.shape), 1)


# ===----------------------------------------------------------------------=== #
# MLIR
# ===----------------------------------------------------------------------=== #

def memref_type(shape, dynamic, element, strides=None, offset=None,
                device=False):
    dims = "".join(("?" if d else str(n)) + "x"
                   for n, d in zip(shape, dynamic))
    attrs = []
    if strides is not None:
        attrs.append(f"strided<[{', '.join(map(str, strides))}], "
                     f"offset: {offset}>")
    if device:
        attrs.append(DEVICE)
    return f"memref<{dims}{element}" + "".join(", " + a for a in attrs) + ">"


def base_type(n, element, device=False):
    return memref_type([n], [False], element, device=device)


class Emitter:
    def __init__(self, case):
        self.case = case
        self.element = TYPES[case.dtype][0]
        self.lines = []
        self.frees = []

    def emit(self, line):
        self.lines.append("  " + line)

    def sizes(self):
        """The sizes operand list of a reinterpret_cast or alloc."""
        return ", ".join(f"%n{d}" if dyn else str(n) for d, (n, dyn) in
                         enumerate(zip(self.case.shape, self.case.dynamic)))

    def dynamic_sizes(self):
        return ", ".join(f"%n{d}" for d, dyn in enumerate(self.case.dynamic)
                         if dyn)

    def alloc(self, name, n, device=False):
        t = base_type(n, self.element, device)
        self.emit(f"%{name} = memref.alloc() : {t}")
        self.frees.append(f"memref.dealloc %{name} : {t}")
        return t

    def view(self, name, buffer, view, device=False):
        c = self.case
        src = base_type(view.base, self.element, device)
        t = memref_type(c.shape, c.dynamic, self.element, view.strides,
                        view.offset, device)
        self.emit(f"%{name} = memref.reinterpret_cast %{buffer} to offset: "
                  f"[{view.offset}], sizes: [{self.sizes()}], strides: "
                  f"[{', '.join(map(str, view.strides))}] : {src} to {t}")
        return t

    def dense(self, name, device=False):
        c = self.case
        t = memref_type(c.shape, c.dynamic, self.element, device=device)
        self.emit(f"%{name} = memref.alloc({self.dynamic_sizes()}) : {t}")
        self.frees.append(f"memref.dealloc %{name} : {t}")
        return t


def case_function(case):
    e = Emitter(case)
    element = e.element
    suffix = TYPES[case.dtype][1]
    args = ", ".join(f"%n{d}: index" for d, dyn in enumerate(case.dynamic)
                     if dyn)
    # The source: a filled buffer and a view of it.
    base_t = e.alloc("base", case.source.base)
    e.emit(f"%base_any = memref.cast %base : {base_t} to "
           f"memref<?x{element}>")
    e.emit(f"%seed = arith.constant {case.seed} : i64")
    e.emit(f"call @fill_{case.dtype}(%base_any, %seed) : "
           f"(memref<?x{element}>, i64) -> ()")
    src_t = e.view("src", "base", case.source)
    # To the device.
    if case.device:
        e.alloc("dbase", case.device.base, device=True)
        dev_t = e.view("dev", "dbase", case.device, device=True)
    else:
        dev_t = e.dense("dev", device=True)
    e.emit(f"etcopy.h2d %src, %dev : {src_t} -> {dev_t}")
    last, last_t = "dev", dev_t
    if case.device_copy:
        buffer = "dbase"
        if not case.alias:
            e.alloc("dbase2", case.device_copy.base, device=True)
            buffer = "dbase2"
        copy_t = e.view("dcopy", buffer, case.device_copy, device=True)
        e.emit(f"memref.copy %dev, %dcopy : {dev_t} to {copy_t}")
        last, last_t = "dcopy", copy_t
    # Back into the canvas.
    canvas_t = e.alloc("canvas", case.canvas)
    e.emit(f"%canvas_any = memref.cast %canvas : {canvas_t} to "
           f"memref<?x{element}>")
    e.emit(f"call @sentinel_{case.dtype}(%canvas_any) : "
           f"(memref<?x{element}>) -> ()")
    if case.host:
        host_t = e.view("host", "canvas", case.host)
        e.emit(f"etcopy.d2h %{last}, %host : {last_t} -> {host_t}")
    else:
        host_t = e.dense("host")
        e.emit(f"etcopy.d2h %{last}, %host : {last_t} -> {host_t}")
        start = View(case.canvas, 0, contiguous_strides(case.shape))
        start_t = e.view("start", "canvas", start)
        e.emit(f"memref.copy %host, %start : {host_t} to {start_t}")
    e.emit(f"%print = memref.cast %canvas : {canvas_t} to "
           f"memref<*x{element}>")
    e.emit(f"call @printMemref{suffix}(%print) : (memref<*x{element}>) -> ()")
    for free in reversed(e.frees):
        e.emit(free)
    e.emit("return")
    return ([f"// Case {case.id} ({case.name}): {case.describe()}.",
             f"func.func @case_{case.id}({args}) {{"] + e.lines + ["}", ""])


def fill_functions(dtypes):
    """@fill_T(buffer, seed): element k gets a value drawn from k and the
    seed (printable characters for i8), exact in every type;
    @sentinel_T(buffer): every element gets the sentinel."""
    out = []
    for dtype in sorted(dtypes):
        element, _, sentinel = TYPES[dtype]
        t = f"memref<?x{element}>"

        def convert(value, result):
            if dtype in ("f32", "f64"):
                return [f"%{result} = arith.sitofp %{value} : i64 to "
                        f"{element}"]
            if dtype in ("f16", "bf16"):
                return [f"%{result}_f32 = arith.sitofp %{value} : i64 to f32",
                        f"%{result} = arith.truncf %{result}_f32 : f32 to "
                        f"{element}"]
            if dtype == "i64":
                return [f"%{result} = arith.addi %{value}, %zero : i64"]
            return [f"%{result} = arith.trunci %{value} : i64 to {element}"]

        low, count = (48, 75) if dtype == "i8" else (-99, 199)
        body = [
            f"func.func @fill_{dtype}(%buffer: {t}, %seed: i64) {{",
            "  %c0 = arith.constant 0 : index",
            "  %c1 = arith.constant 1 : index",
            "  %zero = arith.constant 0 : i64",
            "  %step = arith.constant 37 : i64",
            f"  %count = arith.constant {count} : i64",
            f"  %low = arith.constant {low} : i64",
            f"  %n = memref.dim %buffer, %c0 : {t}",
            "  scf.for %k = %c0 to %n step %c1 {",
            "    %ki = arith.index_cast %k : index to i64",
            "    %scaled = arith.muli %ki, %step : i64",
            "    %seeded = arith.addi %scaled, %seed : i64",
            "    %wrapped = arith.remsi %seeded, %count : i64",
            "    %value = arith.addi %wrapped, %low : i64",
        ] + ["    " + line for line in convert("value", "x")] + [
            f"    memref.store %x, %buffer[%k] : {t}",
            "  }",
            "  return",
            "}",
            "",
            f"func.func @sentinel_{dtype}(%buffer: {t}) {{",
            "  %c0 = arith.constant 0 : index",
            "  %c1 = arith.constant 1 : index",
            "  %zero = arith.constant 0 : i64",
            f"  %value = arith.constant {sentinel} : i64",
        ] + ["  " + line for line in convert("value", "x")] + [
            f"  %n = memref.dim %buffer, %c0 : {t}",
            "  scf.for %k = %c0 to %n step %c1 {",
            f"    memref.store %x, %buffer[%k] : {t}",
            "  }",
            "  return",
            "}",
            "",
        ]
        out += body
    return out


def module(cases):
    lines = [
        "// The round-trip sweep of the GPU check bundle, generated by",
        "// utils/gpu-check/sweep.py: each @case_N copies a view of a filled",
        "// host buffer to cuda:0 and back into a view of a sentinel-filled",
        "// canvas, and prints the canvas.",
        "",
    ]
    suffixes = sorted({TYPES[c.dtype] for c in cases})
    for element, suffix, _ in suffixes:
        lines.append(f"func.func private @printMemref{suffix}"
                     f"(memref<*x{element}>) attributes "
                     "{llvm.emit_c_interface}")
    lines.append("")
    lines += fill_functions({c.dtype for c in cases})
    for case in cases:
        lines += case_function(case)
    return "\n".join(lines)


def c_main(cases):
    lines = [
        "// The entry of the round-trip sweep, generated by",
        "// utils/gpu-check/sweep.py: `sweep N` runs case N with the sizes",
        "// the module leaves dynamic.",
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "",
    ]
    for case in cases:
        params = ", ".join("int64_t" for d in case.dynamic if d) or "void"
        lines.append(f"void case_{case.id}({params});")
    lines += [
        "",
        "int main(int argc, char **argv) {",
        "  if (argc != 2) {",
        '    fprintf(stderr, "usage: %s CASE\\n", argv[0]);',
        "    return 2;",
        "  }",
        "  switch (atoi(argv[1])) {",
    ]
    for case in cases:
        sizes = ", ".join(str(n) for n, d in zip(case.shape, case.dynamic)
                          if d)
        lines.append(f"  case {case.id}: case_{case.id}({sizes}); break;")
    lines += [
        "  default:",
        '    fprintf(stderr, "no case %s\\n", argv[1]);',
        "    return 2;",
        "  }",
        "  return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def generate(seed, random_cases):
    cases = fixed_cases()
    rng = random.Random(seed)
    for _ in range(random_cases):
        cases.append(random_case(len(cases), rng))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=25,
                        help="seed of the random cases (default: 25)")
    parser.add_argument("--random", type=int, default=120,
                        help="random cases after the fixed ones "
                        "(default: 120)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    args = parser.parse_args()
    cases = generate(args.seed, args.random)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "sweep.mlir"), "w") as f:
        f.write(module(cases))
    with open(os.path.join(args.output, "sweep-main.c"), "w") as f:
        f.write(c_main(cases))
    with open(os.path.join(args.output, "cases.json"), "w") as f:
        json.dump([dict(asdict(c), description=c.describe()) for c in cases],
                  f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
