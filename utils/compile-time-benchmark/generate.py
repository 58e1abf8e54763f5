#!/usr/bin/env python3
# ===- generate.py - Large inputs for the compile-time benchmark ---------=== #
#
# Generates MLIR inputs whose size grows with N, one shape per case, for
# measuring how the compile time of etcopy's passes (and of any pipeline)
# grows with the input. Every case is valid input of the passes it is
# measured with, and of the full --etcopy-to-cuda pipeline.
#
#   generate.py CASE N [-o FILE]
#   generate.py --list
#
# Only the Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Generates large MLIR inputs for utils/compile-time-benchmark."""

import argparse
import sys

DEVICE = "#etcopy.device<cuda:0>"


def host_tensor(n):
    return f"tensor<{n}xf32>"


def device_tensor(n):
    return f"tensor<{n}xf32, {DEVICE}>"


def host_memref(n):
    return f"memref<{n}xf32>"


def device_memref(n):
    return f"memref<{n}xf32, {DEVICE}>"


def delegate(name, argument, result):
    """The declaration of a bodiless delegate on cuda:0."""
    return [f"func.func private @{name}({argument}) -> {result}",
            f"    attributes {{etcopy.device = {DEVICE}}}"]


def groups_memref(n):
    """N independent groups, each a buffer on cuda:0 that an out-form h2d
    fills and an out-form d2h reads before it is freed: lifetimes that never
    overlap."""
    h, d = host_memref(64), device_memref(64)
    lines = [f"func.func @method(%in: {h}, %out: {h}) {{"]
    for i in range(n):
        lines += [
            f"  %b{i} = memref.alloc() : {d}",
            f"  etcopy.h2d %in, %b{i} : {h} -> {d}",
            f"  etcopy.d2h %b{i}, %out : {d} -> {h}",
            f"  memref.dealloc %b{i} : {d}",
        ]
    lines += ["  return", "}"]
    return lines


def groups_tensor(n):
    """N independent groups of functional copies around a delegate: a host
    value copied to cuda:0, a kernel, a d2h made too early (it sinks past
    @host_work), a same-device round trip (elided) and a second kernel."""
    h, d = host_tensor(16), device_tensor(16)
    lines = [
        f"func.func private @produce() -> {h}",
        *delegate("kernel", d, d),
        "func.func private @host_work()",
        f"func.func private @consume({h}, {h})",
        "func.func @method() {",
    ]
    for i in range(n):
        lines += [
            f"  %x{i} = func.call @produce() : () -> {h}",
            f"  %d{i} = etcopy.h2d %x{i} : {h} -> {d}",
            f"  %y{i} = func.call @kernel(%d{i}) : ({d}) -> {d}",
            f"  %h{i} = etcopy.d2h %y{i} : {d} -> {h}",
            f"  %r{i} = etcopy.h2d %h{i} : {h} -> {d}",
            f"  %z{i} = func.call @kernel(%r{i}) : ({d}) -> {d}",
            "  func.call @host_work() : () -> ()",
            f"  %g{i} = etcopy.d2h %z{i} : {d} -> {h}",
            f"  func.call @consume(%h{i}, %g{i}) : ({h}, {h}) -> ()",
        ]
    lines += ["  return", "}"]
    return lines


def delegate_chain(n):
    """A method calling a chain of N distinct delegates on cuda:0, each
    taking the previous one's result; host input and output."""
    h = host_tensor(16)
    lines = []
    for i in range(n):
        lines += delegate(f"d{i}", h, h)
    lines.append(f"func.func @method(%v0: {h}) -> {h} {{")
    for i in range(n):
        lines.append(f"  %v{i + 1} = func.call @d{i}(%v{i}) : ({h}) -> {h}")
    lines += [f"  return %v{n} : {h}", "}"]
    return lines


def loop_nest(n):
    """A host tensor threaded through N nested scf.for loops, each carrying
    the one above's iter_arg (the shape tiling makes), written in the
    innermost loop, then copied to cuda:0 for a delegate and back. N is the
    nesting depth, not a count of groups."""
    h, d = host_tensor(16), device_tensor(16)
    lines = [
        *delegate("kernel", d, d),
        f"func.func @method(%x: {h}, %y: tensor<1xf32>) -> {h} {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c4 = arith.constant 4 : index",
    ]
    for i in range(n):
        indent = "  " * (i + 1)
        init = f"%a{i - 1}" if i else "%x"
        lines.append(f"{indent}%r{i} = scf.for %i{i} = %c0 to %c4 step %c1 "
                     f"iter_args(%a{i} = {init}) -> ({h}) {{")
    indent = "  " * (n + 1)
    lines += [f"{indent}%w = tensor.insert_slice %y into %a{n - 1}"
              f"[%i{n - 1}] [1] [1] : tensor<1xf32> into {h}",
              f"{indent}scf.yield %w : {h}"]
    for i in reversed(range(n)):
        lines.append("  " * (i + 1) + "}")
        if i:
            lines.append("  " * (i + 1) + f"scf.yield %r{i} : {h}")
    lines += [
        f"  %d = etcopy.h2d %r0 : {h} -> {d}",
        f"  %k = func.call @kernel(%d) : ({d}) -> {d}",
        f"  %o = etcopy.d2h %k : {d} -> {h}",
        f"  return %o : {h}",
        "}",
    ]
    return lines


# Buffer sizes (elements) cycled through by the planner cases: unequal, so
# that packing has gaps to fill.
SIZES = [64, 256, 1024, 128, 512]


def buffers(n, window):
    """N buffers of varying sizes on cuda:0; buffer i is filled by an h2d
    when allocated and read by a d2h just before it is freed, `window`
    allocations later (all at the end when `window` is None)."""
    args = ", ".join(f"%in{s}: {host_memref(s)}, %out{s}: {host_memref(s)}"
                     for s in SIZES)
    lines = [f"func.func @method({args}) {{"]

    def free(i):
        s = SIZES[i % len(SIZES)]
        h, d = host_memref(s), device_memref(s)
        return [f"  etcopy.d2h %b{i}, %out{s} : {d} -> {h}",
                f"  memref.dealloc %b{i} : {d}"]

    for i in range(n):
        s = SIZES[i % len(SIZES)]
        h, d = host_memref(s), device_memref(s)
        lines += [f"  %b{i} = memref.alloc() : {d}",
                  f"  etcopy.h2d %in{s}, %b{i} : {h} -> {d}"]
        if window is not None and i >= window:
            lines += free(i - window)
    first_live = 0 if window is None else max(0, n - window)
    for i in range(first_live, n):
        lines += free(i)
    lines += ["  return", "}"]
    return lines


CASES = {
    "groups-memref": (groups_memref,
                      "N buffers with disjoint lifetimes (alloc, out-form "
                      "h2d and d2h, dealloc)"),
    "groups-tensor": (groups_tensor,
                      "N groups of functional copies around delegate calls"),
    "delegate-chain": (delegate_chain,
                       "a method calling a chain of N distinct delegates"),
    "loop-nest": (loop_nest,
                  "a tensor threaded through N nested scf.for loops, then "
                  "through a delegate"),
    "buffers-overlapping": (lambda n: buffers(n, 8),
                            "N buffers of 5 sizes, each live across the "
                            "next 8 allocations"),
    "buffers-all-live": (lambda n: buffers(n, None),
                         "N buffers of 5 sizes, all live at once"),
}


def generate(case, n):
    """The module text of `case` at size `n`."""
    make, _ = CASES[case]
    return "\n".join(make(n)) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", nargs="?", choices=sorted(CASES))
    parser.add_argument("n", nargs="?", type=int, help="size (groups, "
                        "chain length, buffers or loop nesting depth)")
    parser.add_argument("-o", "--output", help="output file (default: "
                        "stdout)")
    parser.add_argument("--list", action="store_true",
                        help="list the cases and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, description) in sorted(CASES.items()):
            print(f"{name}: {description}")
        return 0
    if args.case is None or args.n is None or args.n < 1:
        parser.error("a case and a size of at least 1 are required")
    text = generate(args.case, args.n)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
