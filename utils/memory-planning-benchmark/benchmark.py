#!/usr/bin/env python3
"""Benchmark of etcopy-plan-device-memory on generated functions.

Generates memref-level functions whose buffers live on CUDA devices (chains,
diamonds, skip connections, loops, mixed sizes, two devices), plans them with
`etcopy-opt --etcopy-plan-device-memory --remarks-filter-passed=etcopy` (a
remark per planned function gives its arenas), and reports per case:

  * bytes requested: the sum of the buffer sizes (what the function would
    allocate without planning, loops counted once);
  * arena bytes: the sum of the arena sizes the planner chose;
  * peak live: the most bytes live at one program point, a lower bound of
    the arena bytes (both in 256-byte slots);
  * device allocations per call, before and after planning: counted by the
    CUDA simulator (ETCOPY_CUDA_SIM_STATS=1) on a run of each case lowered
    with --etcopy-to-cuda.

  benchmark.py --etcopy-opt BIN --runner "mlir-runner -e main ..."
               [--scale full|small] [--check] [--keep DIR]

prints the Markdown table of docs/MemoryPlanning.md. The runner command must
load the CUDA simulator (--shared-libs=.../libetcopy_cuda_sim.so,...).

With --check the script fails unless, in every case, planning leaves one
device allocation per arena (plus one per execution of a dynamically sized
buffer) and the arena bytes lie between the lower bound and the bytes
requested. Python 3 standard library only.
"""
import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile

KIB = 1024
MIB = 1024 * KIB
SLOT = 256


def slots(size):
    """Bytes a buffer takes in an arena: whole 256-byte slots."""
    return (size + SLOT - 1) // SLOT * SLOT


class Function:
    """Builds the body of @bench(%in, %out) as MLIR text, and counts what an
    unplanned call allocates."""

    def __init__(self, in_size, out_size):
        self.in_size = in_size
        self.out_size = out_size
        self.lines = []
        self.types = {"%in": (None, in_size, False),
                      "%out": (None, out_size, False)}
        self.counter = 0
        self.indent = 1
        self.trips = 1             # iterations of the enclosing loops
        self.device_buffers = 0    # static count of device allocations
        self.device_allocs = 0     # device allocations per call
        self.dynamic_allocs = 0    # of which dynamically sized
        self.requested = 0         # bytes of the statically sized ones
        self.padded = 0            # the same in whole 256-byte slots

    @staticmethod
    def type(device, size, dynamic=False):
        shape = "?" if dynamic else str(size)
        space = f", #etcopy.device<cuda:{device}>" if device is not None else ""
        return f"memref<{shape}xi8{space}>"

    def emit(self, text):
        self.lines.append("  " * self.indent + text)

    def fresh(self, prefix):
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def constant(self, value):
        name = self.fresh("c")
        self.emit(f"{name} = arith.constant {value} : index")
        return name

    def alloc(self, device, size, dynamic=False):
        name = self.fresh("b")
        if dynamic:
            count = self.constant(size)
            self.emit(f"{name} = memref.alloc({count}) : "
                      f"{self.type(device, size, True)}")
        else:
            self.emit(f"{name} = memref.alloc() : {self.type(device, size)}")
        self.types[name] = (device, size, dynamic)
        if device is not None:
            self.device_buffers += 1
            self.device_allocs += self.trips
            if dynamic:
                self.dynamic_allocs += self.trips
            else:
                self.requested += size
                self.padded += slots(size)
        return name

    def dealloc(self, name):
        device, size, dynamic = self.types[name]
        self.emit(f"memref.dealloc {name} : {self.type(device, size, dynamic)}")

    def _prefix(self, name, size):
        """`name` itself, or a view of its first `size` bytes."""
        device, full, dynamic = self.types[name]
        full_type = self.type(device, full, dynamic)
        if size == full:
            return name, full_type
        view = self.fresh("v")
        space = f", #etcopy.device<cuda:{device}>" if device is not None else ""
        view_type = f"memref<{size}xi8, strided<[1]>{space}>"
        self.emit(f"{view} = memref.subview {name}[0] [{size}] [1] : "
                  f"{full_type} to {view_type}")
        return view, view_type

    def copy(self, src, dst):
        """Copies the common prefix of two buffers: memref.copy on one
        device, etcopy.h2d/d2h between host and device."""
        size = min(self.types[src][1], self.types[dst][1])
        s, s_type = self._prefix(src, size)
        d, d_type = self._prefix(dst, size)
        src_dev, dst_dev = self.types[src][0], self.types[dst][0]
        if src_dev is None and dst_dev is not None:
            self.emit(f"etcopy.h2d {s}, {d} : {s_type} -> {d_type}")
        elif src_dev is not None and dst_dev is None:
            self.emit(f"etcopy.d2h {s}, {d} : {s_type} -> {d_type}")
        else:
            assert src_dev == dst_dev, "cross-device copies go through the host"
            self.emit(f"memref.copy {s}, {d} : {s_type} to {d_type}")

    def loop(self, trips, body):
        lower, upper, step = (self.constant(0), self.constant(trips),
                              self.constant(1))
        self.emit(f"scf.for {self.fresh('i')} = {lower} to {upper} "
                  f"step {step} {{")
        self.indent += 1
        self.trips *= trips
        body()
        self.trips //= trips
        self.indent -= 1
        self.emit("}")

    def module(self):
        in_type, out_type = self.type(None, self.in_size), self.type(
            None, self.out_size)
        return "\n".join([
            f"func.func @bench(%in: {in_type}, %out: {out_type}) {{",
            *self.lines,
            "  return",
            "}",
            "",
            "func.func @main() {",
            f"  %in = memref.alloc() : {in_type}",
            f"  %out = memref.alloc() : {out_type}",
            f"  func.call @bench(%in, %out) : ({in_type}, {out_type}) -> ()",
            f"  memref.dealloc %in : {in_type}",
            f"  memref.dealloc %out : {out_type}",
            "  return",
            "}",
            "",
        ])


#===----------------------------------------------------------------------===#
# Cases
#===----------------------------------------------------------------------===#


def chain(size, length):
    """b0 = upload(in); b[i] = f(b[i-1]), b[i-1] freed; out = download."""
    f = Function(size, size)
    prev = f.alloc(0, size)
    f.copy("%in", prev)
    for _ in range(length - 1):
        cur = f.alloc(0, size)
        f.copy(prev, cur)
        f.dealloc(prev)
        prev = cur
    f.copy(prev, "%out")
    f.dealloc(prev)
    return f


def chain_mixed(sizes):
    """A chain whose buffers have different sizes."""
    f = Function(sizes[0], sizes[-1])
    prev = f.alloc(0, sizes[0])
    f.copy("%in", prev)
    for size in sizes[1:]:
        cur = f.alloc(0, size)
        f.copy(prev, cur)
        f.dealloc(prev)
        prev = cur
    f.copy(prev, "%out")
    f.dealloc(prev)
    return f


def diamonds(size, count):
    """x -> (l, r) -> y, repeated: three buffers live at each step."""
    f = Function(size, size)
    x = f.alloc(0, size)
    f.copy("%in", x)
    for _ in range(count):
        left, right = f.alloc(0, size), f.alloc(0, size // 2)
        f.copy(x, left)
        f.copy(x, right)
        f.dealloc(x)
        y = f.alloc(0, size)
        f.copy(left, y)
        f.copy(right, y)
        f.dealloc(left)
        f.dealloc(right)
        x = y
    f.copy(x, "%out")
    f.dealloc(x)
    return f


def skips(size, depth):
    """U-Net-like: encoder buffers halve in size and stay live until the
    decoder level of the same size consumes them."""
    f = Function(size, size)
    encoder = [f.alloc(0, size)]
    f.copy("%in", encoder[0])
    for level in range(1, depth):
        cur = f.alloc(0, size >> level)
        f.copy(encoder[-1], cur)
        encoder.append(cur)
    up = encoder.pop()
    for skip in reversed(encoder):
        cur = f.alloc(0, f.types[skip][1])
        f.copy(up, cur)
        f.copy(skip, cur)
        f.dealloc(up)
        f.dealloc(skip)
        up = cur
    f.copy(up, "%out")
    f.dealloc(up)
    return f


def loop(size, trips):
    """A state buffer updated by a loop whose body allocates temporaries."""
    f = Function(size, size)
    state = f.alloc(0, size)
    f.copy("%in", state)

    def body():
        tmp = f.alloc(0, size)
        f.copy(state, tmp)
        half = f.alloc(0, size // 2)
        f.copy(tmp, half)
        f.dealloc(tmp)
        f.copy(half, state)
        f.dealloc(half)

    f.loop(trips, body)
    f.copy(state, "%out")
    f.dealloc(state)
    return f


def two_devices(size, length):
    """A chain that alternates between cuda:0 and cuda:1 through host
    staging buffers (host buffers are not planned by default)."""
    f = Function(size, size)
    prev = f.alloc(0, size)
    f.copy("%in", prev)
    for step in range(1, length):
        device = step % 2
        staging = f.alloc(None, size)
        f.copy(prev, staging)
        f.dealloc(prev)
        cur = f.alloc(device, size)
        f.copy(staging, cur)
        f.dealloc(staging)
        prev = cur
    f.copy(prev, "%out")
    f.dealloc(prev)
    return f


def mixed(rng, scale, steps):
    """Random sizes on two devices, buffers living one to four steps, a loop
    and a dynamically sized buffer (which stays an allocation)."""
    f = Function(64 * KIB * scale, 64 * KIB * scale)
    live = []  # (buffer, last step)
    seed = f.alloc(0, 64 * KIB * scale)
    f.copy("%in", seed)
    live.append((seed, 1))
    for step in range(steps):
        device = rng.randrange(2)
        size = rng.choice([4, 16, 64, 256, 1024]) * KIB * scale // 16
        cur = f.alloc(device, size)
        same = [b for b, _ in live if f.types[b][0] == device]
        if same:
            f.copy(rng.choice(same), cur)
        else:
            staging = f.alloc(None, size)
            f.copy(live[-1][0], staging)
            f.copy(staging, cur)
            f.dealloc(staging)
        live.append((cur, step + rng.randint(1, 4)))
        for buffer, last in [entry for entry in live if entry[1] <= step]:
            f.dealloc(buffer)
            live.remove((buffer, last))
    dynamic = f.alloc(0, 8 * KIB * scale, dynamic=True)

    def body():
        tmp = f.alloc(0, 32 * KIB * scale)
        f.copy(dynamic, tmp)
        f.copy(tmp, dynamic)
        f.dealloc(tmp)

    f.loop(4, body)
    f.copy(dynamic, "%out")
    f.dealloc(dynamic)
    for buffer, _ in live:
        f.dealloc(buffer)
    return f


def random_lifetimes(rng, scale, count):
    """Many buffers of random sizes with random, overlapping lifetimes on one
    device: the hard case for any planner (optimal packing is NP-hard)."""
    f = Function(4 * KIB * scale, 4 * KIB * scale)
    live = []  # (buffer, last step)
    first = f.alloc(0, 4 * KIB * scale)
    f.copy("%in", first)
    live.append((first, 2))
    for step in range(count - 1):
        cur = f.alloc(0, rng.randint(1, 64) * KIB * scale // 4)
        f.copy(rng.choice(live)[0], cur)
        live.append((cur, step + rng.randint(1, 8)))
        for buffer, last in [entry for entry in live if entry[1] <= step]:
            if len(live) > 1:
                f.dealloc(buffer)
                live.remove((buffer, last))
    f.copy(live[-1][0], "%out")
    for buffer, _ in live:
        f.dealloc(buffer)
    return f


def cases(scale):
    """(name, description, function) for every case; `scale` multiplies the
    buffer sizes."""
    rng = random.Random(2024)
    sizes = [rng.choice([16, 64, 256, 1024, 2048]) * KIB * scale // 16
             for _ in range(16)]
    unit = MIB * scale // 16
    return [
        ("chain", "16 equal buffers, each live for two steps",
         chain(unit, 16)),
        ("chain-mixed", "16 buffers of random sizes in a chain",
         chain_mixed(sizes)),
        ("diamonds", "8 fork/join diamonds", diamonds(unit, 8)),
        ("skips", "U-Net-like skip connections, 6 levels",
         skips(unit, 6)),
        ("loop", "a state updated by 8 iterations with 2 temporaries each",
         loop(unit, 8)),
        ("two-devices", "a chain alternating cuda:0 and cuda:1, 16 buffers",
         two_devices(unit, 16)),
        ("mixed", "random sizes, lifetimes and devices, a loop, a dynamic "
                  "buffer", mixed(rng, scale, 24)),
        ("random", "48 buffers of random sizes and overlapping lifetimes",
         random_lifetimes(rng, scale, 48)),
    ]


#===----------------------------------------------------------------------===#
# Measurement
#===----------------------------------------------------------------------===#

REMARK = re.compile(r'remark: \[Passed\] ArenasPlanned .*Remark="planned ([^"]*)"')
ARENA = re.compile(r"(\S+) arena: (\d+) buffer\(s\), (\d+) bytes requested, "
                   r"(\d+) bytes \(peak live (\d+)\)")
STATS = re.compile(r"etcopy-cuda-sim: stats: .*\ballocs=(\d+) frees=(\d+)")


def run(command, **kwargs):
    proc = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if proc.returncode:
        sys.exit(f"command failed ({proc.returncode}): "
                 f"{' '.join(map(shlex.quote, command))}\n{proc.stderr}")
    return proc


def device_allocations(args, source, directory, name):
    """Device allocations of one run of @main (one call of @bench)."""
    lowered = os.path.join(directory, name + ".lowered.mlir")
    # The unplanned baseline: the pipeline plans by default. Host buffers
    # stay pageable: the simulator counts a pinned one as an allocation too.
    run([args.etcopy_opt, source,
         "--etcopy-to-cuda=plan-memory=false pinned-host-memory=false", "-o",
         lowered])
    env = dict(os.environ, ETCOPY_CUDA_SIM_STATS="1",
               ETCOPY_CUDA_SIM_DEVICES="2")
    with open(lowered) as stdin:
        proc = run(shlex.split(args.runner), stdin=stdin, env=env)
    match = STATS.search(proc.stderr)
    if not match:
        sys.exit(f"no simulator statistics for {name}:\n{proc.stderr}")
    return int(match.group(1))


def measure(args, name, function, directory):
    source = os.path.join(directory, name + ".mlir")
    planned = os.path.join(directory, name + ".planned.mlir")
    with open(source, "w") as f:
        f.write(function.module())
    proc = run([args.etcopy_opt, source,
                "--etcopy-plan-device-memory",
                "--remarks-filter-passed=etcopy",
                "--mlir-print-op-on-diagnostic=false", "-o", planned])
    arenas = []
    for line in proc.stderr.splitlines():
        match = REMARK.search(line)
        if match:
            arenas += [(m[0], int(m[1]), int(m[2]), int(m[3]), int(m[4]))
                       for m in ARENA.findall(match.group(1))]
    return {
        "buffers": function.device_buffers,
        "expected_before": function.device_allocs,
        "dynamic": function.dynamic_allocs,
        "before": device_allocations(args, source, directory, name),
        "after": device_allocations(args, planned, directory,
                                    name + ".planned"),
        "arenas": arenas,
        "requested": sum(a[2] for a in arenas),
        "arena_bytes": sum(a[3] for a in arenas),
        "peak": sum(a[4] for a in arenas),
        "generated_requested": function.requested,
        "padded": function.padded,
    }


def human(size):
    if size >= MIB:
        return f"{size / MIB:.2f} MiB"
    if size >= KIB:
        return f"{size / KIB:.2f} KiB"
    return f"{size} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etcopy-opt", required=True)
    parser.add_argument("--runner", required=True,
                        help="mlir-runner command line running @main against "
                             "the CUDA simulator")
    parser.add_argument("--scale", choices=["full", "small"], default="full",
                        help="full: buffer sizes up to 2 MiB; small: 1/16")
    parser.add_argument("--check", action="store_true",
                        help="fail unless planning leaves one allocation per "
                             "arena (plus dynamic buffers)")
    parser.add_argument("--keep", help="directory to keep the generated IR in")
    args = parser.parse_args()

    scale = 16 if args.scale == "full" else 1
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or scratch
        os.makedirs(directory, exist_ok=True)
        for name, description, function in cases(scale):
            m = measure(args, name, function, directory)
            rows.append((name, description, m))
            expected_after = len(m["arenas"]) + m["dynamic"]
            problems = []
            if m["before"] != m["expected_before"]:
                problems.append(f"{m['before']} allocations before planning, "
                                f"expected {m['expected_before']}")
            if m["after"] != expected_after:
                problems.append(f"{m['after']} allocations after planning, "
                                f"expected one per arena "
                                f"({len(m['arenas'])}) + {m['dynamic']} "
                                f"dynamic")
            if m["requested"] != m["generated_requested"]:
                problems.append(f"{m['requested']} bytes planned, "
                                f"{m['generated_requested']} generated")
            if not m["peak"] <= m["arena_bytes"] <= m["padded"]:
                problems.append(f"{m['arena_bytes']} arena bytes, not between "
                                f"the peak live bytes ({m['peak']}) and the "
                                f"padded bytes requested ({m['padded']})")
            failures += [f"{name}: {p}" for p in problems]

    print("| case | device buffers | device allocations per call "
          "(before → after) | arenas | bytes requested | arena bytes | "
          "peak live (lower bound) | arena / requested |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, description, m in rows:
        devices = ", ".join(a[0] for a in m["arenas"])
        ratio = m["arena_bytes"] / m["requested"] if m["requested"] else 0
        print(f"| {name} | {m['buffers']} | {m['before']} → {m['after']} | "
              f"{len(m['arenas'])} ({devices}) | {human(m['requested'])} | "
              f"{human(m['arena_bytes'])} | {human(m['peak'])} | "
              f"{ratio:.0%} |")
    print()
    for name, description, _ in rows:
        print(f"- {name}: {description}")
    if args.check:
        for failure in failures:
            print(f"FAIL: {failure}")
        if not failures:
            print("OK: one device allocation per arena in every case")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
