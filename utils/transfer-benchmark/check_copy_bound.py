#!/usr/bin/env python3
# ===- check_copy_bound.py - Lowered copies never exceed etcopy's count ---=== #
#
# For every placement test input (test/Dialect/EtCopy/propagate-device*.mlir
# and optimize-transfers*.mlir, split at `// -----`) and every program of the
# transfer benchmark, compares
#
#   (a) the etcopy.h2d/d2h/d2d ops left by `etcopy-opt
#       --etcopy-propagate-device --etcopy-optimize-transfers --canonicalize`
#       (the placement stage of the pipeline), the lower
#       bound the placement passes meet, plus one device-to-device copy for
#       each device argument a public function returns as is (MLIR's
#       ownership-based deallocation makes the caller own every returned
#       buffer, so a function returns a copy of a buffer it does not own),
#       with
#   (b) the copy call sites of the code `--etcopy-to-cuda` lowers the same
#       input to: calls of cudaMemcpyAsync, cudaMemcpy2DAsync,
#       cudaMemcpyBatchAsync, cudaMemcpyPeerAsync and of the strided-copy
#       helper, each once (a call of __etcopy_memcpy_xN, which makes N
#       cudaMemcpyAsync calls, N times), in the program's functions (not in
#       the runtime support functions the lowering emits).
#
# and fails, naming the input and both counts, when (b) > (a) or when the
# lowering fails. A placement test runs with each set of
# etcopy-propagate-device options its RUN lines use (skip flags), and with
# the defaults. Split cases that expect an error, and those that compute on
# device tensors (which needs kernels etcopy does not generate), are skipped
# (the output says which and why). `--xfail NAME` marks a known defect: it is reported
# as XFAIL and does not fail the run, but fails it once it passes (XPASS),
# so that the list stays current.
#
# ===----------------------------------------------------------------------=== #
"""Checks that lowered code makes no more copy calls than etcopy places."""

import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from copy_counting import (count_copy_call_sites, count_copy_ops,  # noqa: E402
                           count_returned_device_arguments)
import transfer_benchmark  # noqa: E402

PLACEMENT_TESTS = ("propagate-device*.mlir", "optimize-transfers*.mlir")
SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)
EXPECTED_ERROR = re.compile(r"expected-error\b")
RUN_LINE = re.compile(r"^//\s*RUN:(.*)$", re.MULTILINE)
PROPAGATE = re.compile(r"--?etcopy-propagate-device(?:=(\"[^\"]*\"|\S+))?")
DEFINITION = re.compile(r"^\s*func\.func (private |nested )?@([\w$.-]+)\(",
                        re.MULTILINE)
SKIP_FLAGS = ("skip-h2d-for-method-inputs", "skip-d2h-for-method-outputs")
# What etcopy-elementwise-to-linalg says about computation on device tensors.
NO_KERNELS = "etcopy generates no device kernels"


@dataclass
class Case:
    name: str
    mlir: str
    flags: Tuple[str, ...]  # the skip flags that are on


def flag_sets(test: str) -> List[Tuple[str, ...]]:
    """The skip-flag combinations of the test's RUN lines, defaults first."""
    sets = [()]
    for run in RUN_LINE.findall(test):
        for match in PROPAGATE.finditer(run):
            options = (match.group(1) or "").strip('"').split()
            flags = []
            for option in options:
                name, _, value = option.partition("=")
                if name not in SKIP_FLAGS:
                    sys.exit(f"error: unknown etcopy-propagate-device option "
                             f"'{option}' in a RUN line")
                if value in ("", "true", "1"):
                    flags.append(name)
            flags = tuple(sorted(flags))
            if flags not in sets:
                sets.append(flags)
    return sets


def case_label(test: str, index: int, part: str) -> str:
    """`file@method`, after the first public function the split case
    defines (stable when cases are added around it), else `file#index`."""
    for match in DEFINITION.finditer(part):
        if not match.group(1):
            return f"{test}@{match.group(2)}"
    return f"{test}#{index}"


def placement_cases(test_dir: str, skipped: List[str]) -> List[Case]:
    cases = []
    paths = sorted({p for pattern in PLACEMENT_TESTS
                    for p in glob.glob(os.path.join(test_dir, pattern))})
    for path in paths:
        with open(path) as f:
            test = f.read()
        name = os.path.basename(path)
        parts = SPLIT.split(test)
        sets = flag_sets(test)
        for index, part in enumerate(parts):
            label = case_label(name, index, part) if len(parts) > 1 else name
            if EXPECTED_ERROR.search(part):
                skipped.append(f"{label}: expects an error (the placement "
                               "pass rejects it by design)")
                continue
            if "func.func" not in part:
                skipped.append(f"{label}: no function (a RUN-only file)")
                continue
            for flags in sets:
                suffix = "" if not flags else \
                    " [" + " ".join(flags) + "]"
                cases.append(Case(label + suffix, part, flags))
    return cases


def benchmark_cases(sizes: List[int]) -> List[Case]:
    cases = []
    for size in sizes:
        for make in transfer_benchmark.PROGRAMS:
            program = make(size)
            cases.append(Case(f"benchmark {program.name} (size {size})",
                              transfer_benchmark.emit_mlir(program), ()))
    return cases


def run(command: List[str], mlir: str) -> Tuple[Optional[str], str]:
    process = subprocess.run(command, input=mlir, capture_output=True,
                             text=True)
    if process.returncode != 0:
        return None, process.stderr
    return process.stdout, process.stderr


def first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    return stderr.strip().splitlines()[-1] if stderr.strip() else "no output"


def measure(etcopy_opt: str, case: Case
            ) -> Tuple[Optional[int], Optional[int], Optional[str]]:
    """(a), (b) and what is wrong, if anything."""
    placement = [etcopy_opt, "--etcopy-propagate-device" +
                 ("=" + " ".join(case.flags) if case.flags else ""),
                 "--etcopy-optimize-transfers", "--canonicalize"]
    options = " ".join(f"{flag}=true" for flag in case.flags)
    lowering = [etcopy_opt, "--etcopy-to-cuda" +
                (f"={options}" if options else "")]
    placed, stderr = run(placement, case.mlir)
    if placed is None:
        return None, None, f"{case.name}: placement failed: " \
            f"{first_error(stderr)}"
    bound = count_copy_ops(placed) + count_returned_device_arguments(placed)
    lowered, stderr = run(lowering, case.mlir)
    if lowered is None and NO_KERNELS in stderr:
        return None, None, None
    if lowered is None:
        return bound, None, f"{case.name}: --etcopy-to-cuda failed: " \
            f"{first_error(stderr)}"
    sites = sum(count_copy_call_sites(lowered).values())
    if sites > bound:
        return bound, sites, f"{case.name}: {sites} copy call sites in the " \
            f"lowered code, more than the {bound} etcopy copies"
    return bound, sites, None


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--etcopy-opt", default=os.path.join(
        root, "build", "bin", "etcopy-opt"), help="the etcopy-opt binary")
    parser.add_argument("--tests", default=os.path.join(
        root, "test", "Dialect", "EtCopy"),
        help="the folder of the placement tests")
    parser.add_argument("--benchmark-size", type=int, action="append",
                        help="sizes of the transfer benchmark programs "
                        "(default: 2 and 4, the sizes its test uses)")
    parser.add_argument("--xfail", action="append", default=[],
                        metavar="NAME", help="a case known to exceed the "
                        "bound (the name as printed)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every case, not only the failures")
    args = parser.parse_args()

    skipped: List[str] = []
    cases = placement_cases(args.tests, skipped)
    cases += benchmark_cases(args.benchmark_size or [2, 4])

    within = [0, 0, 0]  # inputs, etcopy copies, copy call sites
    failures, xfails, xpasses = [], [], []
    unknown = set(args.xfail) - {c.name for c in cases}
    if unknown:
        sys.exit(f"error: --xfail names no case: {', '.join(sorted(unknown))}")
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        results = list(pool.map(lambda c: measure(args.etcopy_opt, c), cases))
    for case, (bound, sites, failure) in zip(cases, results):
        if bound is None and failure is None:
            skipped.append(f"{case.name}: computes on device tensors, which "
                           "needs kernels etcopy does not generate")
            continue
        if not failure:
            within[0] += 1
            within[1] += bound
            within[2] += sites
        expected = case.name in args.xfail
        if failure and expected:
            xfails.append(failure)
        elif failure:
            failures.append(failure)
        elif expected:
            xpasses.append(f"{case.name}: {sites} copy call sites, "
                           f"{bound} etcopy copies")
        if args.verbose:
            print(f"{case.name}: etcopy {'-' if bound is None else bound}, "
                  f"lowered {'-' if sites is None else sites}")

    for line in skipped:
        print(f"skipped {line}")
    for line in xfails:
        print(f"XFAIL {line}")
    for line in xpasses:
        print(f"XPASS {line} (remove its --xfail)")
    for line in failures:
        print(f"FAIL {line}")
    print(f"{len(cases)} inputs checked, {len(skipped)} split cases skipped")
    print(f"{within[0]} within the bound: {within[1]} etcopy copies, "
          f"{within[2]} copy call sites in the lowered code")
    print(f"{len(failures)} over the bound or not lowered, {len(xfails)} "
          f"known (XFAIL), {len(xpasses)} XPASS")
    return 1 if failures or xpasses else 0


if __name__ == "__main__":
    sys.exit(main())
