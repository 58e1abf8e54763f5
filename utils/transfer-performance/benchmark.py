#!/usr/bin/env python3
# ===- benchmark.py - Modelled time and CUDA calls of etcopy's transfers -=== #
#
# Runs the scenarios of docs/TransferPerformance.md: for each variant,
# generates the program (generate.py), lowers it with etcopy-opt
# --etcopy-to-cuda and the variant's options, translates it to LLVM IR,
# links it with its C harness against the CUDA simulator, runs it with
# ETCOPY_CUDA_SIM_STATS=1 and reads the simulator's `stats:` lines: the
# CUDA calls made (per entry point), streams created, synchronisations,
# bytes copied per path, and the host's modelled time at exit (`model:
# host_ns`, the simulator's timing model, docs/CudaSimulator.md). Prints
# one Markdown table per scenario and whether each goal of the issue is
# met. The model is virtual time: every figure is exact and the same on
# every machine.
#
#   benchmark.py [--scenarios small,large,chain,peer,graphs] [sizes]
#                [--check] [etcopy-opt ...]
#
# With --check, fails (exit status 1) if a structural claim does not hold
# (call counts, streams, paths; see `checks` below), or if a goal listed
# with --require-goal is not met. Only the Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Modelled time and CUDA calls of etcopy's transfers on the simulator."""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

COPY_ENTRY_POINTS = ("cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D",
                     "cudaMemcpy2DAsync", "cudaMemcpyPeer",
                     "cudaMemcpyPeerAsync", "cudaMemcpyBatchAsync")
STATS = re.compile(r"^etcopy-cuda-sim: stats: (?:([\w-]+): )?(.*)$")


# ===----------------------------------------------------------------------=== #
# Running one variant
# ===----------------------------------------------------------------------=== #

# MemRef1D, the C interface descriptor the harnesses share with the
# execution tests' C delegates.
DESCRIPTORS_INCLUDE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))), "test", "Execution", "Inputs")


@dataclass
class Tools:
    etcopy_opt: List[str]
    mlir_translate: List[str]
    cc: List[str]
    cuda_sim: str
    cuda_sim_include: str
    workdir: str
    keep: Optional[str] = None


@dataclass
class Stats:
    """The simulator's statistics of one run, by group (`""` for the first
    line, then `copies`, `calls`, `entry-points`, `model`)."""
    groups: Dict[str, Dict[str, int]] = field(default_factory=dict)
    output: str = ""

    def get(self, group: str, key: str) -> int:
        return self.groups.get(group, {}).get(key, 0)

    @property
    def host_ns(self) -> int:
        return self.get("model", "host_ns")

    @property
    def copy_calls(self) -> Dict[str, int]:
        entries = self.groups.get("entry-points", {})
        return {name: entries[name] for name in COPY_ENTRY_POINTS
                if entries.get(name)}

    @property
    def copy_call_count(self) -> int:
        return sum(self.copy_calls.values())

    def median_ms(self, what: str) -> float:
        """The per-call median the harness printed for `what`."""
        for line in self.output.splitlines():
            match = re.match(r"time: (.*): median of \d+ calls ([0-9.]+) ms",
                             line)
            if match and match.group(1) == what:
                return float(match.group(2))
        sys.exit(f"error: no time for '{what}' in:\n{self.output}")


def parse_stats(text: str) -> Stats:
    stats = Stats(output=text)
    for line in text.splitlines():
        match = STATS.match(line)
        if not match:
            continue
        items = stats.groups.setdefault(match.group(1) or "", {})
        for item in match.group(2).split():
            key, _, value = item.partition("=")
            items[key] = int(value)
    return stats


def checked(command: List[str], what: str, **kwargs) -> str:
    process = subprocess.run(command, capture_output=True, text=True,
                             **kwargs)
    if process.returncode != 0:
        sys.exit(f"error: {what} failed (exit status {process.returncode}):"
                 f"\n$ {shlex.join(command)}\n"
                 f"{process.stdout[-3000:]}{process.stderr[-3000:]}")
    return process.stdout + process.stderr


def simulator_environment(devices: int, extra: Dict[str, str]):
    """The environment of a run: the caller's, without any simulator
    setting except the cost overrides (so that a user can explore the
    model), plus the statistics and the variant's settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ETCOPY_CUDA_SIM_") or cost_override(k)}
    env.update(ETCOPY_CUDA_SIM_STATS="1",
               ETCOPY_CUDA_SIM_DEVICES=str(devices), **extra)
    return env


def cost_override(name: str) -> bool:
    return re.match(r"ETCOPY_CUDA_SIM_(COST_\w+_NS|BW_\w+_GBPS)$",
                    name) is not None


def run_variant(tools: Tools, name: str, mlir: str, c: str, options: str,
                devices: int = 1, env: Optional[Dict[str, str]] = None,
                cflags: Sequence[str] = ()) -> Stats:
    """Lowers `mlir` with --etcopy-to-cuda=`options`, links it with the
    harness `c` (compiled with `cflags`) against the simulator, runs it and
    returns its stats."""
    base = os.path.join(tools.workdir, name)
    with open(base + ".mlir", "w") as f:
        f.write(mlir)
    with open(base + ".c", "w") as f:
        f.write(c)
    pipeline = "--etcopy-to-cuda" + (f"={options}" if options else "")
    checked([*tools.etcopy_opt, base + ".mlir", pipeline, "-o",
             base + ".lowered.mlir"], f"lowering {name}")
    checked([*tools.mlir_translate, "--mlir-to-llvmir",
             base + ".lowered.mlir", "-o", base + ".ll"],
            f"translating {name}")
    checked([*tools.cc, "-O1", "-Wno-override-module", "-c", base + ".ll",
             "-o", base + ".o"], f"compiling {name}")
    checked([*tools.cc, "-O1", *cflags, f"-I{tools.cuda_sim_include}",
             f"-I{DESCRIPTORS_INCLUDE}", base + ".c",
             base + ".o", "-o", base + ".exe", tools.cuda_sim,
             f"-Wl,-rpath,{os.path.dirname(os.path.abspath(tools.cuda_sim))}"],
            f"linking {name}")
    output = checked([base + ".exe"], f"running {name}",
                     env=simulator_environment(devices, env or {}))
    if "check: " not in output:
        sys.exit(f"error: {name} printed no data check:\n{output}")
    if tools.keep:
        os.makedirs(tools.keep, exist_ok=True)
        for suffix in (".mlir", ".c", ".lowered.mlir"):
            with open(base + suffix) as src, \
                    open(os.path.join(tools.keep, name + suffix), "w") as dst:
                dst.write(src.read())
        with open(os.path.join(tools.keep, name + ".stats"), "w") as f:
            f.write(output)
    return parse_stats(output)


# ===----------------------------------------------------------------------=== #
# Formatting
# ===----------------------------------------------------------------------=== #

def size(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def modelled(ns: int) -> str:
    """Modelled nanoseconds as µs (below 10 ms) or ms, exact to 0.1 µs."""
    if ns < 10_000_000:
        return f"{ns / 1e3:,.1f} µs"
    return f"{ns / 1e6:,.4f} ms"


def ratio(baseline: Stats, variant: Stats) -> float:
    return baseline.host_ns / variant.host_ns


def speedup(value: float) -> str:
    return f"{value:.2f}×"


def calls_cell(stats: Stats) -> str:
    return ", ".join(f"`{name}` {count}"
                     for name, count in stats.copy_calls.items()) or "none"


def table(header: List[str], rows: List[List[str]]) -> List[str]:
    return ["| " + " | ".join(header) + " |",
            "|" + "---|" * len(header)] + \
        ["| " + " | ".join(row) + " |" for row in rows]


@dataclass
class Report:
    lines: List[str] = field(default_factory=list)
    failures: List[str] = field(default_factory=list)
    goals: Dict[str, bool] = field(default_factory=dict)

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def check(self, what: str, holds: bool) -> None:
        """A structural claim: --check fails when it does not hold."""
        self.add(f"- check: {what}: {'ok' if holds else 'FAILED'}")
        if not holds:
            self.failures.append(what)

    def goal(self, key: str, what: str, met: bool, detail: str) -> None:
        """A goal of the issue: reported; --require-goal makes it a check."""
        self.goals[key] = met
        self.add(f"- goal {key}: {what}: {'met' if met else 'NOT met'} "
                 f"({detail})")


# ===----------------------------------------------------------------------=== #
# Scenarios
# ===----------------------------------------------------------------------=== #

def small_copies(tools: Tools, args, report: Report) -> None:
    n, b = args.copies, args.copy_bytes
    report.add(f"### (a) Small copies: {n} host-to-device copies of "
               f"{size(b)} in one function", "")
    mlir, c = generate.small(n, b, 1)
    loop = run_variant(tools, "small-loop", mlir, c, "batch-copies=false")
    batched = run_variant(tools, "small-batched", mlir, c, "")
    rows = []
    for label, stats in (("loop of `cudaMemcpyAsync` "
                          "(`batch-copies=false`)", loop),
                         ("etcopy default (batched)", batched)):
        rows.append([label, str(stats.copy_call_count), calls_cell(stats),
                     f"{stats.get('copies', 'batches')} "
                     f"({stats.get('copies', 'batch_copies')})",
                     str(stats.get("", "streams_created")),
                     str(stats.get("", "syncs")), modelled(stats.host_ns),
                     speedup(ratio(loop, stats))])
    report.add(*table(["variant", "copy API calls", "by entry point",
                       "batches (copies in them)", "streams created",
                       "syncs", "modelled time", "speedup"], rows), "")
    gain = ratio(loop, batched)
    report.goal("a-speedup", f"batched at least 2x faster than the loop at "
                f"N = {n}", gain >= 2, speedup(gain))
    report.goal("a-calls", "at most 10 copy API calls when batched",
                batched.copy_call_count <= 10,
                f"{batched.copy_call_count} calls")
    report.check(f"the loop makes one copy call per copy plus the download "
                 f"({n + 1})", loop.copy_call_count == n + 1)
    batches = -(-n // 512)
    report.check(f"batched: {batches} `cudaMemcpyBatchAsync` of the {n} "
                 f"uploads, one `cudaMemcpyAsync` (the download)",
                 batched.copy_calls == {"cudaMemcpyAsync": 1,
                                        "cudaMemcpyBatchAsync": batches}
                 and batched.get("copies", "batch_copies") == n)
    report.add("")

    r = args.small_calls
    report.add(f"The same function called {r} times:", "")
    mlir, c = generate.small(n, b, r)
    persistent = run_variant(tools, "small-persistent", mlir, c, "")
    mlir, c = generate.small(n, b, r, per_call_streams=True)
    per_call = run_variant(tools, "small-per-call-streams", mlir, c, "")
    rows = []
    for label, stats in (("stream created per call (replaced "
                          "`etcopy_get_stream`)", per_call),
                         ("etcopy default (persistent streams)",
                          persistent)):
        rows.append([label, str(stats.get("", "streams_created")),
                     str(stats.get("", "streams_destroyed")),
                     str(stats.copy_call_count), modelled(stats.host_ns),
                     modelled(stats.host_ns // r),
                     speedup(ratio(per_call, stats))])
    report.add(*table(["variant", "streams created", "streams destroyed",
                       "copy API calls", "modelled time", "per call",
                       "speedup"], rows), "")
    report.goal("a-streams", f"{r} calls create 1 stream per device",
                persistent.get("", "streams_created") == 1,
                f"{persistent.get('', 'streams_created')} created")
    report.check(f"a stream per call: {r} streams created and destroyed",
                 per_call.get("", "streams_created") == r and
                 per_call.get("", "streams_destroyed") == r)
    report.add("")


# Calls of the large copy: the first allocates the host buffers, later ones
# take them from the caches; the harness reports the median per call.
LARGE_CALLS = 3
LARGE_PER_CALL = "large_copy (upload + download, with the host allocations)"
RAW_PINNED = "raw cudaMemcpy, pinned (upload + download)"


def large_copies(tools: Tools, args, report: Report) -> None:
    sizes = sorted(set(args.large_sweep) | {args.large_bytes})
    report.add("### (b) Large copies: pageable against pinned host memory",
               "", "One upload and one download of each size through "
               f"host buffers the function allocates and frees, {LARGE_CALLS} "
               "calls: the total of all calls, then the median of one call "
               "(a call after the first, which allocates the host buffers; "
               "later calls take them from the caches), against the same "
               "copies with plain `cudaMemcpy` between pinned buffers "
               "allocated once (raw pinned).", "")
    rows, checks = [], []
    main_ratio = main_raw = None
    for nbytes in sizes:
        mlir, c = generate.large(nbytes, LARGE_CALLS)
        tag = size(nbytes).replace(" ", "")
        pageable = run_variant(tools, f"large-{tag}-pageable", mlir, c,
                               "pinned-host-memory=false")
        pinned = run_variant(tools, f"large-{tag}-pinned", mlir, c, "")
        # The raw copies run after the calls, in the same program.
        raw = run_variant(tools, f"large-{tag}-raw", mlir, c, "",
                          cflags=["-DTRANSFER_PERFORMANCE_RAW_BASELINE"]
                          ).median_ms(RAW_PINNED)
        for label, stats in (("pageable (`pinned-host-memory=false`)",
                              pageable),
                             ("pinned (default)", pinned)):
            per_call = stats.median_ms(LARGE_PER_CALL)
            rows.append([size(nbytes), label,
                         str(stats.get("entry-points", "cudaMallocHost")),
                         size(stats.get("copies", "pinned_bytes")),
                         size(stats.get("copies", "pageable_bytes")),
                         str(stats.copy_call_count),
                         modelled(stats.host_ns),
                         speedup(ratio(pageable, stats)),
                         f"{per_call:.3f} ms",
                         speedup(pageable.median_ms(LARGE_PER_CALL) /
                                 per_call),
                         f"{per_call / raw:.2f}×"])
        calls = 2 * LARGE_CALLS
        checks_hold = (
            pinned.get("copies", "h2d_pinned_bytes") == nbytes * LARGE_CALLS
            and pinned.get("copies", "d2h_pinned_bytes") ==
            nbytes * LARGE_CALLS and
            pageable.get("copies", "h2d_pageable_bytes") ==
            nbytes * LARGE_CALLS and
            pageable.get("copies", "d2h_pageable_bytes") ==
            nbytes * LARGE_CALLS and
            pageable.get("copies", "pinned_bytes") == 0 and
            pinned.get("copies", "pageable_bytes") == 0 and
            # One arena for the two buffers, pinned at the first call, kept
            # in the cache.
            pinned.get("entry-points", "cudaMallocHost") == 1 and
            pinned.get("copies", "h2d_pinned") +
            pinned.get("copies", "d2h_pinned") == calls)
        checks.append((f"{size(nbytes)}: both copies pinned by default, "
                       "pageable with `pinned-host-memory=false` (the two "
                       "buffers in one host arena, pinned once in "
                       f"{LARGE_CALLS} calls)", checks_hold))
        if nbytes == args.large_bytes:
            main_ratio = (pageable.median_ms(LARGE_PER_CALL) /
                          pinned.median_ms(LARGE_PER_CALL))
            main_raw = pinned.median_ms(LARGE_PER_CALL) / raw
    report.add(*table(["size", "variant", "`cudaMallocHost` calls",
                       "pinned bytes", "pageable bytes", "copy API calls",
                       f"modelled time, {LARGE_CALLS} calls", "speedup",
                       "one call (median)", "speedup", "over raw pinned"],
                      rows), "")
    report.goal("b-speedup", f"pinned at least 3x faster at "
                f"{size(args.large_bytes)} after the first call",
                main_ratio >= 3,
                speedup(main_ratio))
    report.goal("b-raw", f"the default's round trip of "
                f"{size(args.large_bytes)} within 1.5x of raw pinned "
                "copies after the first call", main_raw <= 1.5,
                f"{main_raw:.2f}×")
    for what, holds in checks:
        report.check(what, holds)
    report.add("")


@dataclass
class ChainVariant:
    label: str
    stream_ordered: bool
    per_call_streams: bool
    options: str
    hoisted: bool = False


# ExecuTorch issues each upload at its delegate: upload-group-bytes=0 keeps
# them there (etcopy-optimize-transfers sinks every copy to its user), and
# stages host data in pageable memory.
PER_DELEGATE = "upload-group-bytes=0"
PAGEABLE = "pinned-host-memory=false"

CHAIN_ABLATION = [
    ChainVariant("ExecuTorch-style: plain delegates, a stream per call, "
                 "pageable, unbatched, uploads at their delegates", False,
                 True, f"batch-copies=false {PER_DELEGATE} {PAGEABLE}"),
    ChainVariant("+ persistent streams", False, False,
                 f"batch-copies=false {PER_DELEGATE} {PAGEABLE}"),
    ChainVariant("+ stream-ordered delegates", True, False,
                 f"batch-copies=false {PER_DELEGATE} {PAGEABLE}"),
    ChainVariant("+ batched", True, False, f"{PER_DELEGATE} {PAGEABLE}"),
    ChainVariant("+ uploads grouped (`pinned-host-memory=false`)", True,
                 False, PAGEABLE),
    ChainVariant("+ pinned: etcopy's defaults", True, False, ""),
    ChainVariant("etcopy's defaults, uploads written before the first call",
                 True, False, "place-copies=false optimize-transfers=false",
                 hoisted=True),
]
# The variant the goal measures: etcopy's defaults.
CHAIN_GOAL = 5

CHAIN_SWEEP = [
    ("ExecuTorch-style", CHAIN_ABLATION[0]),
    ("etcopy, pageable (`pinned-host-memory=false`)", CHAIN_ABLATION[4]),
    ("etcopy's defaults (pinned)", CHAIN_ABLATION[CHAIN_GOAL]),
    ("defaults, uploads at their delegates",
     ChainVariant("", True, False, PER_DELEGATE)),
    ("defaults, uploads hoisted by hand",
     ChainVariant("", True, False, "place-copies=false "
                  "optimize-transfers=false", hoisted=True)),
]
# The sweep's column of etcopy's defaults.
SWEEP_DEFAULTS = 2


def run_chain(tools: Tools, args, variant: ChainVariant, input_bytes: int,
              tag: str) -> Stats:
    mlir, c = generate.chain(args.layers, args.chain_calls,
                             args.activation_bytes, input_bytes,
                             variant.stream_ordered,
                             variant.per_call_streams, variant.hoisted)
    return run_variant(tools, tag, mlir, c, variant.options)


def chain_of_delegates(tools: Tools, args, report: Report) -> None:
    L, r = args.layers, args.chain_calls
    ib = args.input_bytes
    inputs = f"a {size(ib)} host tensor" if ib else "nothing else"
    report.add(f"### (c) A chain of {L} delegates called {r} times", "",
               f"Each delegate reads the previous {size(args.activation_bytes)}"
               f" activation and {inputs}. The copy API calls include the "
               "delegates' own device-to-device `cudaMemcpyAsync`, one per "
               f"delegate call ({L * r}).", "")
    results = []
    for i, variant in enumerate(CHAIN_ABLATION):
        results.append(run_chain(tools, args, variant, ib, f"chain-{i}"))
    baseline = results[0]
    rows = []
    for variant, stats in zip(CHAIN_ABLATION, results):
        rows.append([variant.label, str(stats.get("", "streams_created")),
                     str(stats.get("", "syncs")),
                     str(stats.copy_call_count), calls_cell(stats),
                     str(stats.get("entry-points", "cudaMallocHost")),
                     size(stats.get("copies", "pinned_bytes")),
                     size(stats.get("copies", "pageable_bytes")),
                     modelled(stats.host_ns),
                     speedup(ratio(baseline, stats))])
    report.add(*table(["variant", "streams created", "syncs",
                       "copy API calls", "by entry point",
                       "`cudaMallocHost` calls", "pinned bytes",
                       "pageable bytes", "modelled time", "speedup"], rows),
               "")
    full = ratio(baseline, results[CHAIN_GOAL])
    best = max(range(1, len(results)), key=lambda i: ratio(baseline,
                                                           results[i]))
    report.goal("c-speedup", "etcopy's defaults (stream-ordered, persistent, "
                "batched, uploads grouped, pinned) at least 2x faster than "
                "ExecuTorch-style",
                full >= 2, f"{speedup(full)}; the fastest variant is "
                f"\"{CHAIN_ABLATION[best].label}\" at "
                f"{speedup(ratio(baseline, results[best]))}")
    # The copies are the same in every variant: what differs is how they
    # and the delegates are ordered and synchronised.
    h2d = [s.get("copies", "h2d_pageable") + s.get("copies", "h2d_pinned")
           for s in results]
    d2h = [s.get("copies", "d2h_pageable") + s.get("copies", "d2h_pinned")
           for s in results]
    report.check(f"every variant uploads {h2d[0]} and downloads {d2h[0]} "
                 "times", len(set(h2d)) == 1 and len(set(d2h)) == 1)
    report.check(f"a stream per call: {r} streams created, persistent: 1",
                 baseline.get("", "streams_created") == r and
                 all(s.get("", "streams_created") == 1
                     for s in results[1:]))
    # Plain delegates synchronise at every boundary (the delegate waits
    # for its work; the host also waits before the call when the method
    # has work pending); stream-ordered ones add none: the host waits a
    # fixed number of times per call (at most before the host loops, before
    # freeing the uploaded host buffers, and at the return).
    plain = [s.get("", "syncs") for s in results[:2]]
    ordered = [s.get("", "syncs") for s in results[2:]]
    report.check(f"plain delegates: at least one synchronisation per "
                 f"delegate call ({L * r}); stream-ordered: at most 3 per "
                 f"method call ({3 * r})",
                 min(plain) >= L * r and max(ordered) <= 3 * r)
    # Pinning pays back over calls (the first one pins, the cache serves
    # the others), so the pinned variant is not checked against the one
    # before it: at a few calls the first call's pinning dominates.
    report.check("each variant is faster than the one before it, up to "
                 "grouped uploads",
                 all(results[i].host_ns < results[i - 1].host_ns
                     for i in range(1, CHAIN_GOAL)))
    report.add("")

    if not args.chain_sweep:
        return
    report.add(f"The same chain ({L} delegates, {r} calls) for other sizes "
               "of the host tensor each delegate reads (modelled time, "
               "speedup over ExecuTorch-style):", "")
    rows = []
    worst = None
    for ib in args.chain_sweep:
        cells = []
        stats = [run_chain(tools, args, variant, ib,
                           f"chain-sweep-{size(ib).replace(' ', '')}-{i}")
                 for i, (_, variant) in enumerate(CHAIN_SWEEP)]
        for s in stats:
            cells.append(f"{modelled(s.host_ns)} "
                         f"({speedup(ratio(stats[0], s))})")
        rows.append([size(ib) if ib else "none"] + cells)
        gain = ratio(stats[0], stats[SWEEP_DEFAULTS])
        if worst is None or gain < worst[0]:
            worst = (gain, size(ib) if ib else "none")
    report.add(*table(["host tensor per delegate"] +
                      [name for name, _ in CHAIN_SWEEP], rows), "")
    report.goal("c-sweep", "etcopy's defaults at least 1.5x faster than "
                "ExecuTorch-style at every size of the sweep",
                worst[0] >= 1.5,
                f"the least {speedup(worst[0])}, at {worst[1]}")
    report.add("")


def peer_move(tools: Tools, args, report: Report) -> None:
    nbytes = args.peer_bytes
    report.add(f"### (d) A move of {size(nbytes)} from cuda:0 to cuda:1",
               "")
    mlir, c = generate.peer(nbytes)
    variants = [
        ("through the host, pageable (`optimize-transfers=false "
         "pinned-host-memory=false`)",
         "optimize-transfers=false pinned-host-memory=false", {}),
        ("through the host, pinned (`optimize-transfers=false`)",
         "optimize-transfers=false", {}),
        ("etcopy default: one peer copy", "", {}),
        ("etcopy default, devices without peer access "
         "(`ETCOPY_CUDA_SIM_PEER_ACCESS=none`)", "",
         {"ETCOPY_CUDA_SIM_PEER_ACCESS": "none"}),
    ]
    results = [run_variant(tools, f"peer-{i}", mlir, c, options, devices=2,
                           env=env)
               for i, (_, options, env) in enumerate(variants)]
    rows = []
    for (label, _, _), stats in zip(variants, results):
        get = stats.get
        rows.append([label, str(stats.copy_call_count), calls_cell(stats),
                     size(get("copies", "d2h_pageable_bytes") +
                          get("copies", "d2h_pinned_bytes")),
                     size(get("copies", "h2d_pageable_bytes") +
                          get("copies", "h2d_pinned_bytes")),
                     str(get("copies", "peer_direct")),
                     str(get("copies", "peer_staged")),
                     modelled(stats.host_ns),
                     speedup(ratio(results[0], stats))])
    report.add(*table(["variant", "copy API calls", "by entry point",
                       "device-to-host bytes", "host-to-device bytes",
                       "peer_direct", "peer_staged", "modelled time",
                       "speedup"], rows), "")
    report.add("The harness's check downloads 8 bytes (two `cudaMemcpy` of "
               "4 bytes) in every variant.", "")
    peer = results[2]
    # Host staging: the move's download and upload, plus the check.
    harness_d2h = 8
    met = (peer.get("copies", "peer_direct") == 1 and
           peer.get("copies", "peer_staged") == 0 and
           peer.get("copies", "h2d_pageable") +
           peer.get("copies", "h2d_pinned") == 0 and
           peer.get("copies", "d2h_pageable_bytes") +
           peer.get("copies", "d2h_pinned_bytes") == harness_d2h)
    uploaded = peer.get("copies", "h2d_pageable_bytes") + \
        peer.get("copies", "h2d_pinned_bytes")
    report.goal("d-peer", "one peer copy, no host staging", met,
                f"peer_direct={peer.get('copies', 'peer_direct')}, "
                f"peer_staged={peer.get('copies', 'peer_staged')}, "
                f"{peer.get('entry-points', 'cudaMemcpyPeerAsync')} "
                f"`cudaMemcpyPeerAsync`, {size(uploaded)} uploaded")
    staged = results[0]
    report.check("through the host: the move's bytes go down and up, no "
                 "peer copy",
                 staged.get("copies", "d2h_pageable_bytes") ==
                 nbytes + harness_d2h and
                 staged.get("copies", "h2d_pageable_bytes") == nbytes and
                 staged.get("copies", "peer_direct") == 0)
    report.check("without peer access the driver stages the one peer copy "
                 "(peer_staged=1)",
                 results[3].get("copies", "peer_staged") == 1 and
                 results[3].get("copies", "peer_direct") == 0)
    report.add("")


def graph_chain(tools: Tools, args, report: Report) -> None:
    """(e) The chain on the device, called directly and through a CUDA
    graph (cuda-graphs)."""
    L, r = args.layers, args.chain_calls
    report.add(f"### (e) A chain of {L} stream-ordered delegates on the "
               f"device called {r} times: CUDA graphs", "",
               f"The method's input and output are on cuda:0 "
               f"({size(args.activation_bytes)} each); the harness writes "
               "4 bytes into the input before each call and reads 4 bytes "
               "of the output after it (untimed, in both variants).", "")
    mlir, c = generate.graph_chain(L, r, args.activation_bytes)
    variants = [("stream-ordered delegates, called directly "
                 "(`place-copies=false`)", "place-copies=false"),
                ("captured once, replayed (`place-copies=false "
                 "cuda-graphs=true`)", "place-copies=false cuda-graphs=true")]
    results = [run_variant(tools, f"graphs-{i}", mlir, c, options)
               for i, (_, options) in enumerate(variants)]
    baseline = results[0]
    rows = []
    for (label, _), stats in zip(variants, results):
        entries = stats.groups.get("entry-points", {})
        per_call = stats.median_ms("chain")
        rows.append([label, str(entries.get("cudaMemcpyAsync", 0)),
                     str(entries.get("cudaMallocAsync", 0)),
                     str(entries.get("cudaStreamBeginCapture", 0)),
                     str(entries.get("cudaGraphLaunch", 0)),
                     str(stats.get("", "syncs")),
                     f"{per_call * 1e3:,.1f} µs",
                     speedup(results[0].median_ms("chain") / per_call),
                     modelled(stats.host_ns),
                     speedup(ratio(baseline, stats))])
    report.add(*table(["variant", "`cudaMemcpyAsync` calls",
                       "`cudaMallocAsync` calls", "captures",
                       "`cudaGraphLaunch` calls", "syncs",
                       "one call (median)", "speedup",
                       f"modelled time, {r} calls", "speedup"], rows), "")
    graphs = results[1].groups.get("entry-points", {})
    direct = baseline.groups.get("entry-points", {})
    # Without graphs each call issues its delegates' copies and the
    # method's copy; with graphs only the capture does (the harness's
    # copies are synchronous cudaMemcpy).
    report.goal("e-graph-launch", "with cuda-graphs, one cudaGraphLaunch per "
                "call and no copy call from the lowered code after the "
                "first call",
                graphs.get("cudaGraphLaunch", 0) == r and
                graphs.get("cudaStreamBeginCapture", 0) == 1 and
                graphs.get("cudaMemcpyAsync", 0) == L + 1,
                f"{graphs.get('cudaGraphLaunch', 0)} launches in {r} calls, "
                f"{graphs.get('cudaStreamBeginCapture', 0)} capture(s), "
                f"{graphs.get('cudaMemcpyAsync', 0)} cudaMemcpyAsync")
    report.check(f"called directly, every call issues its {L + 1} copies "
                 f"({(L + 1) * r})",
                 direct.get("cudaMemcpyAsync", 0) == (L + 1) * r)
    report.add("")


SCENARIOS = {"small": small_copies, "large": large_copies,
             "chain": chain_of_delegates, "peer": peer_move,
             "graphs": graph_chain}


# ===----------------------------------------------------------------------=== #
# Driver
# ===----------------------------------------------------------------------=== #

def byte_list(text: str) -> List[int]:
    return [int(item) for item in text.split(",") if item]


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    llvm = "/usr/lib/llvm-22/bin"
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", default="small,large,chain,peer,graphs",
                        help="comma-separated: small, large, chain, peer, "
                        "graphs (default: all)")
    parser.add_argument("--copies", type=int, default=1000,
                        help="(a) small copies per call (default: 1000)")
    parser.add_argument("--copy-bytes", type=int, default=64,
                        help="(a) bytes per small copy (default: 64)")
    parser.add_argument("--small-calls", type=int, default=1000,
                        help="(a) calls for the stream count (default: 1000)")
    parser.add_argument("--large-bytes", type=int, default=256 << 20,
                        help="(b) bytes of the large copies (default: "
                        "256 MiB)")
    parser.add_argument("--large-sweep", type=byte_list,
                        default=[64 << 10, 1 << 20, 16 << 20],
                        help="(b) other sizes, comma-separated bytes "
                        "(default: 64 KiB, 1 MiB, 16 MiB; empty for none)")
    parser.add_argument("--layers", type=int, default=16,
                        help="(c), (e) delegates in the chain (default: 16)")
    parser.add_argument("--chain-calls", type=int, default=100,
                        help="(c), (e) calls of the method (default: 100)")
    parser.add_argument("--activation-bytes", type=int, default=64 << 10,
                        help="(c), (e) bytes of an activation (default: "
                        "64 KiB)")
    parser.add_argument("--input-bytes", type=int, default=4 << 10,
                        help="(c) bytes of the host tensor each delegate "
                        "reads, 0 for none (default: 4 KiB)")
    parser.add_argument("--chain-sweep", type=byte_list,
                        default=[0, 4 << 10, 1 << 20, 4 << 20],
                        help="(c) host tensor sizes of the second table "
                        "(default: 0, 4 KiB, 1 MiB, 4 MiB; empty for none)")
    parser.add_argument("--peer-bytes", type=int, default=64 << 20,
                        help="(d) bytes moved (default: 64 MiB)")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 if a check fails")
    parser.add_argument("--require-goal", action="append", default=[],
                        metavar="GOAL",
                        help="with --check, also fail unless GOAL (e.g. "
                        "a-speedup) is met")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each variant's program, harness, lowered "
                        "code and output in DIR")
    parser.add_argument("--mlir-translate",
                        default=f"{llvm}/mlir-translate")
    parser.add_argument("--cc", default=f"{llvm}/clang",
                        help="clang 22 (default: %(default)s)")
    parser.add_argument("--cuda-sim", default=os.path.join(
        root, "build", "lib", "libetcopy_cuda_sim.so"))
    parser.add_argument("--cuda-sim-include", default=os.path.join(
        root, "lib", "Runtime", "CudaSim"))
    parser.add_argument("etcopy_opt", nargs=argparse.REMAINDER,
                        metavar="etcopy-opt ...",
                        help="the etcopy-opt command, with any extra "
                        "arguments (default: build/bin/etcopy-opt)")
    args = parser.parse_args()
    etcopy_opt = args.etcopy_opt or [os.path.join(root, "build", "bin",
                                                  "etcopy-opt")]
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")

    report = Report()
    overrides = sorted(f"{k}={v}" for k, v in os.environ.items()
                       if cost_override(k))
    report.add("Modelled by the CUDA simulator's timing model with " +
               ("these cost overrides: " + " ".join(overrides)
                if overrides else "its default costs") + ".", "")
    with tempfile.TemporaryDirectory(prefix="transfer-performance-") as work:
        tools = Tools(etcopy_opt,
                      shlex.split(args.mlir_translate), shlex.split(args.cc),
                      args.cuda_sim, args.cuda_sim_include, work, args.keep)
        for name in scenarios:
            SCENARIOS[name](tools, args, report)
    print("\n".join(report.lines).rstrip())
    if not args.check:
        return 0
    missing = [g for g in args.require_goal if g not in report.goals]
    unmet = [g for g in args.require_goal if report.goals.get(g) is False]
    for what in report.failures:
        print(f"error: check failed: {what}", file=sys.stderr)
    for goal in missing:
        print(f"error: no goal {goal} was measured", file=sys.stderr)
    for goal in unmet:
        print(f"error: goal {goal} is not met", file=sys.stderr)
    return 1 if report.failures or missing or unmet else 0


if __name__ == "__main__":
    sys.exit(main())
