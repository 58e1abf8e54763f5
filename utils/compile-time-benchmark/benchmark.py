#!/usr/bin/env python3
# ===- benchmark.py - Compile time and memory of passes on large inputs --=== #
#
# Runs passes or pipelines on inputs of growing size (generate.py) and
# reports, per measurement and size:
#
#   time        median wall time of the pass manager's run, as --mlir-timing
#               reports it: the report's total less parsing and printing,
#               so the passes, the verification after each and the set-up
#               of the pipeline (its pattern sets, the dialects it loads);
#   reference   the same for `--canonicalize --cse` on the same input, run
#               interleaved with the measured passes;
#   ratio       time / reference;
#   growth      how much the time grows per 10x more input, from the
#               previous size: (t / t_prev) ^ (1 / log10(n / n_prev)); 10
#               is linear, 100 quadratic (with --count, n - 1 and
#               n_prev - 1, the units a count less the baseline's holds);
#   ratio growth (for --max-ratio-growth) the same of the ratio: 1 when
#               the passes grow as the linear reference does, 10 when they
#               are quadratic. Load on the machine and cache misses on
#               larger inputs slow both alike, so it is the more robust
#               check of times (counts, below, need neither).
#   peak RSS    of the whole etcopy-opt process (/usr/bin/time -f %M), for
#               the measured passes and for the reference;
#   output per copy
#               the bytes of text the measured passes print, per copy in
#               that text (see COPY), from the first run;
#   upstream    with --upstream: the time of upstream's own lowering of the
#               same program to the LLVM dialect (generate.py --upstream,
#               lowered by generate.UPSTREAM_FLAGS), its ratio to the
#               measured passes' time and its peak RSS.
#
# With --wall, every time is instead the wall time of the whole etcopy-opt
# command as a user meets it: process start, parsing, the passes, and
# printing the output to a file; and the table adds the user CPU time of
# the same commands (the median of its runs), which load on the machine
# inflates less than their wall time.
#
# With --count instructions, every time is instead a count: the
# instructions the whole etcopy-opt command executes under valgrind
# (cachegrind without cache simulation, --mlir-disable-threading), less
# the count of the same command on the case at N = 1 (process start,
# dialect loading, the set-up of the passes), so that a linear pass grows
# exactly 10-fold per 10x. The reference and upstream's lowering are
# counted the same way, each less its own count at N = 1, so that
# --max-ratio-growth bounds the ratio of two counts (as
# test/Pipelines/compile-time-loop-nest.test does, where the measured
# pipelines and the reference are both exponential in N). A count is the
# same every run and load on the machine does not move it: each point runs
# once, the commands --jobs at a time (each distinct command once: a
# reference shared by measurements on the same case, a baseline shared by
# sizes), and a growth check (--max-growth, --max-ratio-growth) can be
# tight: the tests that check growth order (test/Tools/compile-time-*.test,
# test/Pipelines/compile-time-*.test,
# test/Dialect/EtCopy/compile-time-benchmark.mlir) all count. A run takes
# about 30 times as long as without valgrind, plus 5 to 7 s of valgrind
# reading the symbols of libMLIR and libLLVM. No RSS is reported then.
#
# A measurement is `CASE | FLAGS` or `CASE | PREPARE | FLAGS`: the input is
# `generate.py CASE N`, first rewritten (untimed) by `etcopy-opt PREPARE`
# when given, then timed under FLAGS. PREPARE lets the same tool measure
# pipelines that start from another stage, e.g. upstream's GPU lowering on
# the output of convert-etcopy-to-gpu:
#
#   benchmark.py --measure 'groups-memref | --etcopy-to-cuda'
#   benchmark.py --measure \
#     'groups-memref | --convert-etcopy-to-gpu=memory-space=gpu | --gpu-async-region --gpu-to-llvm'
#
# Without --measure, the etcopy passes are measured (see MEASUREMENTS).
# Only the Python standard library is used.
#
# ===----------------------------------------------------------------------=== #
"""Compile-time and memory benchmark of etcopy's passes on large inputs."""

import argparse
import concurrent.futures
import math
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

# The default measurements: every etcopy transformation pass on the inputs
# of its kind, and the placement passes as a pipeline.
MEASUREMENTS = [
    "groups-tensor | --etcopy-propagate-device",
    "delegate-chain | --etcopy-propagate-device",
    "groups-tensor | --etcopy-optimize-transfers",
    "delegate-chain | --etcopy-propagate-device --etcopy-optimize-transfers",
    "groups-memref | --etcopy-plan-device-memory",
    "buffers-overlapping | --etcopy-plan-device-memory",
    "buffers-all-live | --etcopy-plan-device-memory",
]
REFERENCE = "--canonicalize --cse"

# A top-level line of the --mlir-timing report: "  0.0123 ( 45.6%)  Name".
# Nested entries (analyses, the passes of a nested pass manager) are
# indented further after the percentage, and do not match.
TIMING_LINE = re.compile(r"^\s+(\d+\.\d+) \(\s*[\d.]+%\)  (\S.*)$")
NOT_THE_PASSES = ("Parser", "Output")

# A copy in printed output: a call of a copy entry point in lowered code
# (etcopy's `__etcopy_memcpy*` helpers, upstream's `mgpuMemcpy`) or, where
# the output is not lowered that far, a copy op. A batched call counts once;
# a call of `__etcopy_memcpy_xN`, which makes N copies in order, N times
# (the calls in the support functions' bodies count too: at most nine, which
# does not matter at the sizes measured).
COPY = re.compile(r"\bllvm\.call (?:\w+ )?@(?:__etcopy_memcpy(?:_x(\d+))?\w*"
                  r"|mgpuMemcpy)\b|\bgpu\.memcpy\b|\betcopy\.(?:h2d|d2h)\b")


class Measurement:
    def __init__(self, spec):
        parts = [part.strip() for part in spec.split("|")]
        if len(parts) not in (2, 3) or parts[0] not in generate.CASES:
            raise ValueError(
                f"bad measurement '{spec}': expected 'CASE | FLAGS' or "
                f"'CASE | PREPARE | FLAGS' with CASE one of "
                f"{', '.join(sorted(generate.CASES))}")
        self.spec = spec
        self.case = parts[0]
        self.prepare = shlex.split(parts[1]) if len(parts) == 3 else []
        self.flags = shlex.split(parts[-1])

    def label(self):
        prepared = f" (after {' '.join(self.prepare)})" if self.prepare else ""
        return f"{' '.join(self.flags)} on {self.case}{prepared}"


class Timeout(Exception):
    pass


def run_command(command, timeout):
    """Runs `command`; returns (its stderr, its wall seconds). Exits on
    failure; raises Timeout after `timeout` seconds."""
    # In a session of its own, so that a timeout ends etcopy-opt too, not
    # only the /usr/bin/time or valgrind that runs it.
    start = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise Timeout()
    wall = time.perf_counter() - start
    if proc.returncode or not stderr.strip():
        sys.exit(f"failed ({proc.returncode}): "
                 f"{' '.join(map(shlex.quote, command))}\n{stderr}")
    return stderr, wall


def run_timed(opt, flags, path, timeout, output=os.devnull):
    """Runs `opt path flags` once, printing to `output`; returns (pass
    seconds, wall seconds, user CPU seconds, peak RSS in KiB). The wall time
    is that of the whole command, taken here (/usr/bin/time's has 10 ms
    steps); the user time is /usr/bin/time's."""
    stderr, wall = run_command(
        ["/usr/bin/time", "-f", "%U %M", opt, path, *flags, "--mlir-timing",
         "-o", output], timeout)
    user, rss = stderr.splitlines()[-1].split()
    return pass_manager_seconds(stderr), wall, float(user), int(rss)


# Counting instructions: cachegrind without its cache simulation is the
# cheapest exact total valgrind gives (callgrind takes about twice as long
# per instruction, lackey several times). Threading is off so that no
# thread pool's waiting enters the count: the count of a command is then
# the same from run to run.
COUNT_OPTIONS = ["--tool=cachegrind", "--cache-sim=no",
                 "--cachegrind-out-file=/dev/null"]
COUNT_FLAGS = ["--mlir-disable-threading"]
COUNT_LINE = re.compile(r"^==\d+== I\s+refs:\s+([\d,]+)\s*$", re.MULTILINE)


def run_counted(args, flags, path, output=os.devnull):
    """Runs `opt path flags` once under valgrind (`args.valgrind`),
    printing to `output`; returns (instructions executed, wall seconds)."""
    stderr, wall = run_command(
        [*shlex.split(args.valgrind), *COUNT_OPTIONS, args.etcopy_opt, path,
         *flags, *COUNT_FLAGS, "-o", output], args.timeout)
    return instructions(stderr), wall


def instructions(report):
    """The instructions executed, from cachegrind's summary on stderr."""
    match = COUNT_LINE.search(report)
    if not match:
        sys.exit(f"no cachegrind summary (I refs) in:\n{report}")
    return int(match.group(1).replace(",", ""))


def pass_manager_seconds(report):
    """The total of an --mlir-timing report less parsing and printing.

    Not the sum of the passes' entries: a pipeline that a pass runs inside
    itself (etcopy-bufferize runs One-Shot Bufferize and the deallocation
    passes so) is reported both within that pass's time and again as a
    top-level "'builtin.module' Pipeline" entry, which makes the report's
    remainder negative; and the set-up of the pipeline, which the user
    pays too, is in no pass's entry."""
    entries = {}
    for line in report.splitlines():
        match = TIMING_LINE.match(line)
        if match and match.group(2) in ("Total", *NOT_THE_PASSES):
            entries[match.group(2)] = float(match.group(1))
    if "Total" not in entries:
        sys.exit(f"no --mlir-timing report in:\n{report}")
    return entries["Total"] - sum(entries.get(name, 0.0)
                                  for name in NOT_THE_PASSES)


def bytes_per_copy(text):
    """The size of printed output `text` per copy in it (see COPY); None
    when it holds no copy."""
    copies = sum(int(n) if n else 1 for n in COPY.findall(text))
    return len(text.encode()) / copies if copies else None


STATISTICS = {"median": statistics.median, "min": min}


class Point:
    """The runs of one command on one input: pass seconds (with --count,
    instructions less those on `baseline`, the input at N = 1), peak RSS
    and the size of the output."""

    def __init__(self, flags, path, measure_output=False, baseline=None):
        self.flags, self.path, self.baseline = flags, path, baseline
        self.seconds, self.user, self.rss, self.spent = [], [], 0, 0.0
        self.timed_out = False
        self.measure_output = measure_output
        self.bytes_per_copy = None

    def run(self, args):
        if self.timed_out or self.spent >= args.budget:
            return
        # The first run prints to a file, to measure the output; with
        # --wall every run does, as a user's would.
        output = os.devnull
        if args.wall or (self.measure_output and not self.seconds):
            output = f"{self.path}.{os.getpid()}.out"
        try:
            seconds, wall, user, rss = run_timed(
                args.etcopy_opt, self.flags, self.path, args.timeout, output)
        except Timeout:
            self.timed_out = True
            return
        if output != os.devnull:
            if self.measure_output and not self.seconds:
                with open(output) as f:
                    self.bytes_per_copy = bytes_per_copy(f.read())
            os.remove(output)
        self.seconds.append(wall if args.wall else seconds)
        self.user.append(user)
        self.rss = max(self.rss, rss)
        self.spent += wall

    def count(self, args):
        """Counts the instructions of the command, once: they are the same
        every run. `subtract` then takes the baseline's off."""
        output = os.devnull
        if self.measure_output:
            output = f"{self.path}.{threading.get_ident()}.out"
        try:
            count, self.spent = run_counted(args, self.flags, self.path,
                                            output)
        except Timeout:
            self.timed_out = True
            return
        if output != os.devnull:
            with open(output) as f:
                self.bytes_per_copy = bytes_per_copy(f.read())
            os.remove(output)
        self.seconds.append(count)

    def subtract(self, baseline):
        """Leaves what the input adds to the count of the same command on
        the baseline input (`baseline`; None if it timed out): the process
        start, the loading of dialects and the set-up of the passes."""
        if baseline is None:
            self.timed_out = True
        if not self.timed_out:
            self.seconds = [self.seconds[0] - baseline]

    def time(self, args):
        """The median (or minimum) of the runs; None after a timeout."""
        if self.timed_out or not self.seconds:
            return None
        return STATISTICS[args.statistic](self.seconds)

    def user_time(self, args):
        """The same of the user CPU time of the whole command."""
        if self.timed_out or not self.user:
            return None
        return STATISTICS[args.statistic](self.user)


def make_points(args, measurement, reference, sizes, directory):
    """The inputs and points of `measurement`, the reference and (with
    --upstream) upstream's lowering on every size, not run yet:
    {n: (point, reference point, upstream point)}."""
    points = {}
    upstream = shlex.split(generate.upstream_flags(measurement.case))
    baseline = upstream_baseline = None
    if args.count:
        baseline = prepare_input(args, measurement, 1, directory)
        upstream_baseline = upstream_input(measurement, 1, directory)
    for n in sizes:
        path = prepare_input(args, measurement, n, directory)
        points[n] = (Point(measurement.flags, path, measure_output=True,
                           baseline=baseline),
                     None if args.no_reference else Point(reference, path,
                                                          baseline=baseline),
                     Point(upstream, upstream_input(measurement, n,
                                                    directory),
                           baseline=upstream_baseline)
                     if args.upstream else None)
    return points


def measure(args, measurement, reference, sizes, directory):
    """Times `measurement`, the reference and (with --upstream) upstream's
    lowering on every size, `--repeat` times in rounds over the sizes, so
    that a change of load on the machine affects all sizes alike. Returns
    {n: (point, reference point, upstream point)}."""
    points = make_points(args, measurement, reference, sizes, directory)
    for _ in range(args.repeat):
        for n in sizes:
            point, reference_point, upstream_point = points[n]
            if reference_point:
                reference_point.run(args)
            if upstream_point:
                upstream_point.run(args)
                if upstream_point.timed_out:
                    # Larger inputs would take longer still.
                    for m in sizes:
                        if m > n:
                            points[m][2].timed_out = True
            point.run(args)
            if point.timed_out:
                break  # Larger inputs would take longer still.
    return points


def count_points(args, points):
    """Counts every point of `points` and the baselines they need, each
    distinct command once (a reference shared by measurements of the same
    case, a baseline shared by sizes), `--jobs` commands at a time, the
    largest inputs first so that the last command to end is a short one."""

    def count(flags, path):
        try:
            return run_counted(args, list(flags), path)[0]
        except Timeout:
            return None

    # The point that prints its output (for the bytes per copy) counts
    # itself; every other command once, by (flags, input).
    printing = [point for point in points if point.measure_output]
    commands = {(tuple(point.flags), point.path)
                for point in points if not point.measure_output}
    commands |= {(tuple(point.flags), point.baseline) for point in points}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        counted = [pool.submit(point.count, args) for point in sorted(
            printing, key=lambda point: -os.path.getsize(point.path))]
        counts = {command: pool.submit(count, *command) for command in
                  sorted(commands, key=lambda command:
                         -os.path.getsize(command[1]))}
    for future in counted:
        future.result()  # Raises what the count raised.
    for point in points:
        if not point.measure_output:
            value = counts[(tuple(point.flags), point.path)].result()
            if value is None:
                point.timed_out = True
            else:
                point.seconds = [value]
        point.subtract(counts[(tuple(point.flags), point.baseline)].result())


def upstream_input(measurement, n, directory):
    """The file of `measurement`'s case at size `n` in upstream's form."""
    path = os.path.join(directory, f"{measurement.case}-{n}-upstream.mlir")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(generate.generate(measurement.case, n, upstream=True))
    return path


def prepare_input(args, measurement, n, directory):
    path = os.path.join(directory, f"{measurement.case}-{n}.mlir")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(generate.generate(measurement.case, n))
    if not measurement.prepare:
        return path
    prepared = os.path.join(
        directory, f"{measurement.case}-{n}-"
        f"{abs(hash(tuple(measurement.prepare))):x}.mlir")
    if not os.path.exists(prepared):
        proc = subprocess.run([args.etcopy_opt, path, *measurement.prepare,
                               "-o", prepared], capture_output=True,
                              text=True)
        if proc.returncode:
            sys.exit(f"preparing {measurement.case} failed:\n{proc.stderr}")
    return prepared


def fmt(value, spec, missing=""):
    return missing if value is None else format(value, spec)


def growth(previous, n, seconds, base=0):
    """Time growth per 10x more input since `previous` (n, seconds), the
    input measured from size `base` (with --count, the baseline's 1: a
    count at N less the count at 1 is that of N - 1 units)."""
    if not previous or previous[1] <= 0 or seconds is None:
        return None
    n0, s0 = previous
    return (seconds / s0) ** (1 / math.log10((n - base) / (n0 - base)))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--etcopy-opt", default=os.path.join(
        root, "build", "bin", "etcopy-opt"),
        help="the driver running every measurement (default: "
        "build/bin/etcopy-opt, which has every upstream pass too)")
    parser.add_argument("--measure", action="append", metavar="SPEC",
                        help="'CASE | FLAGS' or 'CASE | PREPARE | FLAGS'; "
                        "repeatable (default: the etcopy passes)")
    parser.add_argument("--reference", default=REFERENCE,
                        help=f"flags of the reference (default: "
                        f"'{REFERENCE}')")
    parser.add_argument("--sizes", default="1000,10000,30000,100000",
                        help="comma-separated input sizes")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per point, of which the median counts")
    parser.add_argument("--budget", type=float, default=60,
                        help="stop repeating a point once its runs took "
                        "this many seconds")
    parser.add_argument("--timeout", type=float, default=600,
                        help="give up on a run (and larger sizes of its "
                        "measurement) after this many seconds")
    parser.add_argument("--statistic", choices=sorted(STATISTICS),
                        default="median",
                        help="how the runs of a point combine (default: "
                        "median; min is the least disturbed by other load)")
    parser.add_argument("--upstream", action="store_true",
                        help="also time upstream's own lowering of the same "
                        "program (generate.py --upstream)")
    parser.add_argument("--wall", action="store_true",
                        help="time the whole command (start, parsing, "
                        "passes, printing to a file), not the passes, and "
                        "add its user CPU time")
    parser.add_argument("--count", choices=["instructions"],
                        help="count, instead of timing, the instructions "
                        "each whole command executes under valgrind "
                        "(cachegrind, threading off), less those of the "
                        "same command on the case at N = 1 (the "
                        "reference and --upstream too, each less its own "
                        "count at N = 1, for --max-ratio-growth): exact "
                        "and unmoved by load, one run per point, about 30x "
                        "slower than a run; no RSS")
    parser.add_argument("--valgrind", default="valgrind", metavar="COMMAND",
                        help="with --count, the valgrind to count with, "
                        "split as a shell would (default: valgrind; "
                        "test/Tools/compile-time-benchmark-checks.test "
                        "gives a stand-in whose counts it chooses)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(),
                        help="with --count, commands run at a time "
                        "(default: one per core); times are taken one at "
                        "a time")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not run the reference")
    parser.add_argument("--max-growth", type=float, metavar="G",
                        help="fail unless the time (or count) of every "
                        "measurement grows at most G-fold per 10x more "
                        "input")
    parser.add_argument("--max-ratio-growth", type=float, metavar="R",
                        help="fail unless the ratio of every measurement to "
                        "the reference grows at most R-fold per 10x more "
                        "input")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the generated inputs in DIR")
    args = parser.parse_args()
    if args.max_ratio_growth and args.no_reference:
        parser.error("--max-ratio-growth needs the reference")
    if args.count and args.wall:
        parser.error("--count counts the whole command already; no --wall")
    if args.count and not shutil.which(shlex.split(args.valgrind)[0]):
        parser.error(f"--count needs valgrind ({args.valgrind})")
    try:
        measurements = [Measurement(spec)
                        for spec in (args.measure or MEASUREMENTS)]
    except ValueError as error:
        parser.error(str(error))
    sizes = [int(size) for size in args.sizes.split(",")]
    reference = shlex.split(args.reference)

    user_header = (" user (s) | reference user (s) | user ratio |"
                   if args.wall else "")
    unit = "(M)" if args.count else "(s)"
    upstream_header = (f" upstream {unit} | ratio to upstream | upstream "
                       "RSS (MiB) |" if args.upstream else "")
    what = ("instructions" if args.count else
            "wall time" if args.wall else "time")
    print(f"| passes | N | {what} {unit} | "
          f"{args.reference} {unit} | ratio | growth per 10x | peak RSS (MiB) | "
          f"reference RSS (MiB) | output per copy (B) |{user_header}"
          f"{upstream_header}")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" +
          ("---:|---:|---:|" if args.wall else "") +
          ("---:|---:|---:|" if args.upstream else ""))
    quantity = "instruction count" if args.count else "time"
    # Counts are shown in millions, their growth taken over N - 1 (see
    # growth); a timeout shows as "> N" seconds either way.
    shown = ((lambda value: value and value / 1e6) if args.count else
             (lambda value: value))
    value_format = ".1f" if args.count else ".3f"
    timeout_cell = f"> {args.timeout:.0f}" + (" s" if args.count else "")
    base = 1 if args.count else 0
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or scratch
        os.makedirs(directory, exist_ok=True)
        if args.count:
            # Every command of every measurement in one pool.
            counted = [make_points(args, measurement, reference, sizes,
                                   directory)
                       for measurement in measurements]
            count_points(args, [point for points in counted
                                for triple in points.values()
                                for point in triple if point])
        for index, measurement in enumerate(measurements):
            points = (counted[index] if args.count else
                      measure(args, measurement, reference, sizes,
                              directory))
            previous = previous_ratio = None
            for n in sizes:
                point, reference_point, upstream_point = points[n]
                seconds = point.time(args)
                ref_seconds = reference_point and reference_point.time(args)
                ref_rss = reference_point and reference_point.rss
                factor = growth(previous, n, seconds, base)
                ratio = seconds and ref_seconds and seconds / ref_seconds
                ratio_factor = ratio and growth(previous_ratio, n, ratio, base)
                cells = [measurement.label(), str(n),
                         fmt(shown(seconds), value_format, timeout_cell),
                         fmt(shown(ref_seconds), value_format),
                         fmt(ratio, ".2f"),
                         fmt(factor, ".1f"),
                         # No RSS with --count (valgrind's own).
                         fmt(seconds and point.rss / 1024 or None, ".0f"),
                         fmt(ref_rss and ref_rss / 1024 or None, ".0f"),
                         fmt(point.bytes_per_copy, ".0f")]
                if args.wall:
                    user = point.user_time(args)
                    ref_user = reference_point and reference_point.user_time(
                        args)
                    cells += [fmt(user, ".2f"), fmt(ref_user, ".2f"),
                              fmt(user and ref_user and user / ref_user,
                                  ".2f")]
                if upstream_point:
                    up_seconds = upstream_point.time(args)
                    cells += [fmt(shown(up_seconds), value_format,
                                  timeout_cell),
                              fmt(seconds and up_seconds and
                                  seconds / up_seconds, ".2f"),
                              fmt(up_seconds and
                                  upstream_point.rss / 1024 or None, ".0f")]
                print("| " + " | ".join(cells) + " |", flush=True)
                if seconds is None:
                    failures.append(f"{measurement.label()}: timed out at "
                                    f"N = {n}")
                    break
                if args.max_ratio_growth and ref_seconds is None:
                    # Without the reference's figure no ratio is checked.
                    failures.append(f"{measurement.label()}: the reference "
                                    f"timed out at N = {n}")
                    break
                if args.max_growth and factor and factor > args.max_growth:
                    failures.append(f"{measurement.label()}: {quantity} grows "
                                    f"{factor:.1f}-fold per 10x from N = "
                                    f"{previous[0]} to {n}")
                if (args.max_ratio_growth and ratio_factor and
                        ratio_factor > args.max_ratio_growth):
                    failures.append(f"{measurement.label()}: ratio to the "
                                    f"reference grows {ratio_factor:.1f}-fold "
                                    f"per 10x from N = {previous[0]} to {n}")
                previous = (n, seconds)
                previous_ratio = ratio and (n, ratio)
    for failure in failures:
        print(f"FAIL: {failure}")
    if args.max_growth and not failures:
        print(f"OK: every {quantity} grows at most {args.max_growth:g}-fold "
              "per 10x more input")
    if args.max_ratio_growth and not failures:
        print(f"OK: every ratio to the reference grows at most "
              f"{args.max_ratio_growth:g}-fold per 10x more input")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
