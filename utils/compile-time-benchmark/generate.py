#!/usr/bin/env python3
# ===- generate.py - Large inputs for the compile-time benchmark ---------=== #
#
# Generates MLIR inputs whose size grows with N, one shape per case, for
# measuring how the compile time of etcopy's passes (and of any pipeline)
# grows with the input. Every case is valid input of the passes it is
# measured with, and of the full --etcopy-to-cuda pipeline.
#
# With --upstream, the same program is written in upstream's dialects only,
# as upstream's own lowering (UPSTREAM_FLAGS) takes it: no device in tensor
# types, each tensor copy an explicit `bufferization.alloc_tensor() copy`,
# device buffers `gpu.alloc`ed, copied with `gpu.memcpy` and freed with
# `gpu.dealloc` (on memrefs without a memory space, which upstream's
# --gpu-to-llvm lowers), delegates plain declarations.
#
#   generate.py CASE N [--upstream] [-o FILE]
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


def host_memref(n):
    return f"memref<{n}xf32>"


class EtCopyForm:
    """etcopy's input: device types, delegates, copy ops."""

    def device_tensor(self, n):
        return f"tensor<{n}xf32, {DEVICE}>"

    def device_memref(self, n):
        return f"memref<{n}xf32, {DEVICE}>"

    def delegate(self, name, argument, result):
        """The declaration of a bodiless delegate on cuda:0."""
        return [f"func.func private @{name}({argument}) -> {result}",
                f"    attributes {{etcopy.device = {DEVICE}}}"]

    def copy_tensor(self, result, value, n, to_device):
        """`result` = a copy of the tensor `value` to (or from) cuda:0."""
        h, d = host_tensor(n), self.device_tensor(n)
        op, types = ("h2d", f"{h} -> {d}") if to_device else \
            ("d2h", f"{d} -> {h}")
        return f"  {result} = etcopy.{op} {value} : {types}"

    def alloc(self, result, n):
        return f"  {result} = memref.alloc() : {self.device_memref(n)}"

    def copy_memref(self, source, target, n, to_device):
        """An out-form copy of memref `source` into `target`."""
        h, d = host_memref(n), self.device_memref(n)
        op, types = ("h2d", f"{h} -> {d}") if to_device else \
            ("d2h", f"{d} -> {h}")
        return f"  etcopy.{op} {source}, {target} : {types}"

    def dealloc(self, value, n):
        return f"  memref.dealloc {value} : {self.device_memref(n)}"


class UpstreamForm(EtCopyForm):
    """The same program in upstream's dialects (see the file header)."""

    def device_tensor(self, n):
        return host_tensor(n)

    def device_memref(self, n):
        return host_memref(n)

    def delegate(self, name, argument, result):
        return [f"func.func private @{name}({argument}) -> {result}"]

    def copy_tensor(self, result, value, n, to_device):
        return (f"  {result} = bufferization.alloc_tensor() copy({value}) : "
                f"{host_tensor(n)}")

    def alloc(self, result, n):
        return f"  {result} = gpu.alloc () : {host_memref(n)}"

    def copy_memref(self, source, target, n, to_device):
        m = host_memref(n)
        return f"  gpu.memcpy {target}, {source} : {m}, {m}"

    def dealloc(self, value, n):
        return f"  gpu.dealloc {value} : {host_memref(n)}"


def groups_memref(n, form):
    """N independent groups, each a buffer on cuda:0 that an out-form h2d
    fills and an out-form d2h reads before it is freed: lifetimes that never
    overlap."""
    h = host_memref(64)
    lines = [f"func.func @method(%in: {h}, %out: {h}) {{"]
    for i in range(n):
        lines += [
            form.alloc(f"%b{i}", 64),
            form.copy_memref("%in", f"%b{i}", 64, to_device=True),
            form.copy_memref(f"%b{i}", "%out", 64, to_device=False),
            form.dealloc(f"%b{i}", 64),
        ]
    lines += ["  return", "}"]
    return lines


def groups_tensor(n, form):
    """N independent groups of functional copies around a delegate: a host
    value copied to cuda:0, a kernel, a d2h made too early (it sinks past
    @host_work), a same-device round trip (elided) and a second kernel."""
    h, d = host_tensor(16), form.device_tensor(16)
    lines = [
        f"func.func private @produce() -> {h}",
        *form.delegate("kernel", d, d),
        "func.func private @host_work()",
        f"func.func private @consume({h}, {h})",
        "func.func @method() {",
    ]
    for i in range(n):
        lines += [
            f"  %x{i} = func.call @produce() : () -> {h}",
            form.copy_tensor(f"%d{i}", f"%x{i}", 16, to_device=True),
            f"  %y{i} = func.call @kernel(%d{i}) : ({d}) -> {d}",
            form.copy_tensor(f"%h{i}", f"%y{i}", 16, to_device=False),
            form.copy_tensor(f"%r{i}", f"%h{i}", 16, to_device=True),
            f"  %z{i} = func.call @kernel(%r{i}) : ({d}) -> {d}",
            "  func.call @host_work() : () -> ()",
            form.copy_tensor(f"%g{i}", f"%z{i}", 16, to_device=False),
            f"  func.call @consume(%h{i}, %g{i}) : ({h}, {h}) -> ()",
        ]
    lines += ["  return", "}"]
    return lines


def delegate_chain(n, form):
    """A method calling a chain of N distinct delegates on cuda:0, each
    taking the previous one's result; host input and output."""
    h = host_tensor(16)
    lines = []
    for i in range(n):
        lines += form.delegate(f"d{i}", h, h)
    lines.append(f"func.func @method(%v0: {h}) -> {h} {{")
    for i in range(n):
        lines.append(f"  %v{i + 1} = func.call @d{i}(%v{i}) : ({h}) -> {h}")
    lines += [f"  return %v{n} : {h}", "}"]
    return lines


def alternating_glue(n, form):
    """A method alternating N distinct delegates on cuda:0 with host glue:
    each delegate's result negated on the host (arith.negf, one loop once
    lowered) and passed to the next; host input and output."""
    h = host_tensor(16)
    lines = []
    for i in range(n):
        lines += form.delegate(f"d{i}", h, h)
    lines.append(f"func.func @method(%v0: {h}) -> {h} {{")
    for i in range(n):
        lines += [f"  %c{i} = func.call @d{i}(%v{i}) : ({h}) -> {h}",
                  f"  %v{i + 1} = arith.negf %c{i} : {h}"]
    lines += [f"  return %v{n} : {h}", "}"]
    return lines


def loop_nest(n, form):
    """A host tensor threaded through N nested scf.for loops, each carrying
    the one above's iter_arg (the shape tiling makes), written in the
    innermost loop, then copied to cuda:0 for a delegate and back. N is the
    nesting depth, not a count of groups."""
    h, d = host_tensor(16), form.device_tensor(16)
    lines = [
        *form.delegate("kernel", d, d),
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
        form.copy_tensor("%d", "%r0", 16, to_device=True),
        f"  %k = func.call @kernel(%d) : ({d}) -> {d}",
        form.copy_tensor("%o", "%k", 16, to_device=False),
        f"  return %o : {h}",
        "}",
    ]
    return lines


# Buffer sizes (elements) cycled through by the planner cases: unequal, so
# that packing has gaps to fill.
SIZES = [64, 256, 1024, 128, 512]


def buffers(n, window, form):
    """N buffers of varying sizes on cuda:0; buffer i is filled by an h2d
    when allocated and read by a d2h just before it is freed, `window`
    allocations later (all at the end when `window` is None)."""
    args = ", ".join(f"%in{s}: {host_memref(s)}, %out{s}: {host_memref(s)}"
                     for s in SIZES)
    lines = [f"func.func @method({args}) {{"]

    def free(i):
        s = SIZES[i % len(SIZES)]
        return [form.copy_memref(f"%b{i}", f"%out{s}", s, to_device=False),
                form.dealloc(f"%b{i}", s)]

    for i in range(n):
        s = SIZES[i % len(SIZES)]
        lines += [form.alloc(f"%b{i}", s),
                  form.copy_memref(f"%in{s}", f"%b{i}", s, to_device=True)]
        if window is not None and i >= window:
            lines += free(i - window)
    first_live = 0 if window is None else max(0, n - window)
    for i in range(first_live, n):
        lines += free(i)
    lines += ["  return", "}"]
    return lines


# Each case: the function making it, whether it is tensor- or memref-level
# (which upstream lowering takes its upstream form), and a description.
CASES = {
    "groups-memref": (groups_memref, "memref",
                      "N buffers with disjoint lifetimes (alloc, out-form "
                      "h2d and d2h, dealloc)"),
    "groups-tensor": (groups_tensor, "tensor",
                      "N groups of functional copies around delegate calls"),
    "delegate-chain": (delegate_chain, "tensor",
                       "a method calling a chain of N distinct delegates"),
    "alternating-glue": (alternating_glue, "tensor",
                         "a method alternating N distinct delegates with "
                         "host elementwise glue on their results"),
    "loop-nest": (loop_nest, "tensor",
                  "a tensor threaded through N nested scf.for loops, then "
                  "through a delegate"),
    "buffers-overlapping": (lambda n, form: buffers(n, 8, form), "memref",
                            "N buffers of 5 sizes, each live across the "
                            "next 8 allocations"),
    "buffers-all-live": (lambda n, form: buffers(n, None, form), "memref",
                         "N buffers of 5 sizes, all live at once"),
}

# Upstream's own lowering to the LLVM dialect of a case's upstream form, by
# level: for tensor-level programs, One-Shot Bufferize with identity
# layouts at function boundaries (as etcopy's), then the host lowering
# etcopy-lower-host-code runs (elementwise glue becoming linalg first, as
# etcopy does; no deallocation: One-Shot Bufferize inserts none); for
# memref-level ones, the GPU runtime lowering. Either way an input
# convert-to-llvm or gpu-to-llvm leaves nothing of.
UPSTREAM_FLAGS = {
    "tensor": "--convert-elementwise-to-linalg "
              "--one-shot-bufferize='bufferize-function-boundaries "
              "function-boundary-type-conversion=identity-layout-map' "
              "--convert-linalg-to-loops --expand-strided-metadata "
              "--lower-affine --convert-scf-to-cf --convert-to-llvm "
              "--reconcile-unrealized-casts",
    "memref": "--gpu-async-region --gpu-to-llvm "
              "--reconcile-unrealized-casts",
}


def upstream_flags(case):
    """The flags of upstream's lowering of `case`'s upstream form."""
    return UPSTREAM_FLAGS[CASES[case][1]]


def generate(case, n, upstream=False):
    """The module text of `case` at size `n`, in upstream's dialects only
    when `upstream`."""
    make = CASES[case][0]
    form = UpstreamForm() if upstream else EtCopyForm()
    return "\n".join(make(n, form)) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", nargs="?", choices=sorted(CASES))
    parser.add_argument("n", nargs="?", type=int, help="size (groups, "
                        "chain length, buffers or loop nesting depth)")
    parser.add_argument("--upstream", action="store_true",
                        help="the same program in upstream's dialects only, "
                        "for upstream's lowering (UPSTREAM_FLAGS)")
    parser.add_argument("-o", "--output", help="output file (default: "
                        "stdout)")
    parser.add_argument("--list", action="store_true",
                        help="list the cases and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, level, description) in sorted(CASES.items()):
            print(f"{name} ({level} level): {description}")
        return 0
    if args.case is None or args.n is None or args.n < 1:
        parser.error("a case and a size of at least 1 are required")
    text = generate(args.case, args.n, args.upstream)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
