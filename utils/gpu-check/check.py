#!/usr/bin/env python3
# ===- check.py - Check the results of a GPU check run --------------------=== #
#
# Judges, on the CPU machine, the archive run.sh wrote (on a lent GPU or
# against the simulator) and prints a report in Markdown:
#
#   * each execution test's GPU variant: its exit status (non-zero where
#     the RUN line says `not`), then its output through the RUN line's own
#     consumer (FileCheck with the test's prefixes, any filter before it),
#     run here against the test source the archive carries;
#   * each round trip: the canvas it printed, against the host reference's
#     (addresses aside);
#   * the runtime's unit tests: exit status 0 and GoogleTest's summary;
#   * each transfer benchmark: exit status 0 and its `check: ... data ok`
#     line; its `wall:` lines make the benchmark table;
#   * compute-sanitizer (GPU only): `ERROR SUMMARY: 0 errors` for each
#     program it ran, leak check included.
#
# A program that did not run because the time budget ran out, or timed
# out, fails; one that needs more devices than answered, or that the bundle
# could not build (with the reason), is skipped. Exits 1 if anything
# failed. With --compare OTHER (another archive, say the simulator's), also
# lists the programs whose outcome or output differs between the two.
#
#   check.py RESULTS [--compare OTHER] [--filecheck-dir DIR] [-v]
#
# RESULTS is gpu-check-results.tar.gz, the folder run.sh wrote it to, or
# the folder it unpacks to.
# Needs FileCheck (LLVM 22) for the tests' checks.
#
# ===----------------------------------------------------------------------=== #
"""Checks the results of a GPU check run and prints a report."""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional

PASS, FAIL, SKIP = "pass", "FAIL", "skip"
ARCHIVE = "gpu-check-results.tar.gz"
WALL = re.compile(r"^wall: (.*?) ([0-9.]+) ms(?: ([0-9.]+) GB/s)?\s*$")


@dataclass
class Verdict:
    id: str
    kind: str
    result: str
    note: str = ""
    description: str = ""
    details: str = ""
    walls: List[tuple] = field(default_factory=list)


def normalize(text):
    return re.sub(r"base@ = 0x[0-9a-f]+", "base@ = <address>", text)


def tail(text, lines=12):
    return "\n".join(text.rstrip().splitlines()[-lines:])


class Results:
    def __init__(self, path):
        if os.path.isdir(path) and os.path.exists(
                os.path.join(path, ARCHIVE)):
            path = os.path.join(path, ARCHIVE)
        if os.path.isdir(path):
            root = path
            if os.path.isdir(os.path.join(path, "gpu-check-results")):
                root = os.path.join(path, "gpu-check-results")
        else:
            self.temp = tempfile.TemporaryDirectory(prefix="gpu-check-")
            with tarfile.open(path) as tar:
                tar.extractall(self.temp.name)
            root = os.path.join(self.temp.name, "gpu-check-results")
        self.root = root
        self.info = self.load("info.json")
        self.manifest = {i["id"]: i for i in self.load("manifest.json")
                         ["items"]}
        self.records = {r["id"]: r for r in self.load("results.json")}

    def load(self, name):
        with open(os.path.join(self.root, name)) as f:
            return json.load(f)

    def read(self, relative):
        if not relative:
            return ""
        path = os.path.join(self.root, relative)
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()


class Checker:
    def __init__(self, results: Results, filecheck_dir, verbose):
        self.results = results
        self.env = dict(os.environ, PATH=os.pathsep.join(
            [filecheck_dir, os.environ.get("PATH", "")]))
        self.verbose = verbose

    def verdicts(self) -> List[Verdict]:
        out = []
        for record in self.results.records.values():
            item = self.results.manifest.get(record["id"], {})
            verdict = Verdict(record["id"], record["kind"], PASS,
                              description=item.get("description", ""))
            self.judge(item, record, verdict)
            out.append(verdict)
        return out

    def judge(self, item, record, verdict):
        status = record.get("status")
        if record["kind"] == "sanitizer-tool":
            verdict.result = SKIP if status != "ran" else PASS
            verdict.note = record.get("reason") or record.get("version",
                                                             "")[-200:]
            if status == "unusable":
                verdict.result, verdict.note = SKIP, record["reason"]
            return
        if status == "skipped":
            verdict.result, verdict.note = SKIP, record.get("reason", "")
            return
        if status == "not-run":
            verdict.result, verdict.note = FAIL, record.get("reason", "")
            return
        if status == "error":
            verdict.result = FAIL
            verdict.note = f"could not start: {record.get('error')}"
            return
        if status == "timeout":
            verdict.result = FAIL
            verdict.note = f"killed after {record['timeout']:.0f}s"
            verdict.details = tail(self.results.read(record.get("output")))
            return
        output = self.results.read(record.get("output"))
        stderr = self.results.read(record.get("stderr"))
        code = record.get("exit")
        if record["kind"] == "sanitizer":
            summary = re.search(r"ERROR SUMMARY: (\d+) error", output)
            if summary and summary.group(1) == "0":
                verdict.note = "0 errors, no leaks"
            else:
                verdict.result = FAIL
                verdict.note = (f"{summary.group(1)} error(s)" if summary
                                else f"no ERROR SUMMARY (exit {code})")
                verdict.details = "\n".join(
                    line for line in output.splitlines()
                    if re.search(r"Leaked|Error|Invalid|Program hit|"
                                 r"ERROR SUMMARY", line))[:3000]
            return
        expect_failure = item.get("expect_failure", False)
        if (code != 0) != expect_failure:
            verdict.result = FAIL
            verdict.note = (f"exit status {code}, expected "
                            f"{'non-zero' if expect_failure else '0'}")
            verdict.details = tail(stderr or output)
            return
        kind = record["kind"]
        if kind == "test":
            self.filecheck(item, record, output, verdict)
        elif kind == "sweep":
            expected = self.results.read(item["expected"])
            if normalize(output) != expected:
                verdict.result = FAIL
                verdict.note = "data differ from the host reference"
                verdict.details = first_difference(expected,
                                                   normalize(output))
            else:
                verdict.note = ""
        elif kind == "gtest":
            passed = re.search(r"\[  PASSED  \] (\d+) test", output)
            skipped = re.search(r"\[  SKIPPED \] (\d+) test", output)
            if not passed or "FAILED" in output:
                verdict.result = FAIL
                verdict.note = "GoogleTest reports failures"
                verdict.details = "\n".join(
                    line for line in output.splitlines()
                    if "FAILED" in line or "Failure" in line)[:3000]
            else:
                verdict.note = (f"{passed.group(1)} passed, "
                                f"{skipped.group(1) if skipped else 0} "
                                "skipped")
                names = re.findall(r"^\[  SKIPPED \] (\S+\.\S+)", output,
                                   re.M)
                if names:
                    verdict.note += " (" + ", ".join(sorted(set(names))) + ")"
        elif kind == "bench":
            if not re.search(r"^check: .*data ok", output, re.M):
                verdict.result = FAIL
                verdict.note = "no `check: ... data ok` line"
                verdict.details = tail(output + stderr)
            for line in output.splitlines():
                match = WALL.match(line)
                if match:
                    verdict.walls.append((match.group(1),
                                          float(match.group(2)),
                                          match.group(3)))
        verdict.note += f" ({record.get('seconds', 0):.2f}s)"

    def filecheck(self, item, record, output, verdict):
        consumer = item.get("consumer")
        if not consumer:
            verdict.note = "exit status only"
            return
        process = subprocess.run(["bash", "-o", "pipefail", "-c", consumer],
                                 input=output, capture_output=True,
                                 text=True, cwd=self.results.root,
                                 env=self.env)
        if process.returncode != 0:
            verdict.result = FAIL
            verdict.note = f"`{consumer}` failed"
            verdict.details = tail(process.stderr + process.stdout, 20)
        else:
            verdict.note = f"`{consumer}`"


def first_difference(expected, actual):
    a, b = expected.splitlines(), actual.splitlines()
    for number, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {number}:\n  expected: {x[:300]}\n  got:      " \
                f"{y[:300]}"
    return f"expected {len(a)} lines, got {len(b)}:\n" + tail(actual, 6)


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def report(results: Results, verdicts: List[Verdict], verbose) -> List[str]:
    info = results.info
    lines = [f"# GPU check: {info.get('mode')} run of {info.get('date')}",
             ""]
    facts = [("machine", info.get("host")), ("GPUs", info.get("gpus")),
             ("CUDA driver, runtime", info.get("cuda_versions")),
             ("devices that answer", info.get("devices")),
             ("bundle", f"{info.get('bundle', {}).get('commit')} built "
                        f"{info.get('bundle', {}).get('created')}"),
             ("run time", f"{info.get('seconds')}s of a "
                          f"{info.get('budget_seconds')}s budget")]
    lines += [f"- {k}: {v}" for k, v in facts if v not in (None, "")]
    lines.append("")
    sections = [("Execution tests (GPU variants)", "test"),
                ("Round trips", "sweep"), ("Runtime unit tests", "gtest"),
                ("Transfer benchmarks", "bench"),
                ("compute-sanitizer", "sanitizer")]
    by_kind: Dict[str, List[Verdict]] = {}
    for verdict in verdicts:
        kind = "sanitizer" if verdict.kind.startswith("sanitizer") else \
            verdict.kind
        by_kind.setdefault(kind, []).append(verdict)
    for title, kind in sections:
        group = by_kind.get(kind, [])
        counts = {r: sum(1 for v in group if v.result == r and
                         v.kind != "sanitizer-tool")
                  for r in (PASS, FAIL, SKIP)}
        lines.append(f"## {title}: {counts[PASS]} passed, {counts[FAIL]} "
                     f"failed, {counts[SKIP]} skipped")
        lines.append("")
        shown = group if kind != "sweep" or verbose else \
            [v for v in group if v.result != PASS]
        tool = [v for v in group if v.kind == "sanitizer-tool"]
        group = [v for v in group if v.kind != "sanitizer-tool"]
        if tool:
            ran = "ran" if tool[0].result == PASS else "did not run"
            lines += [f"compute-sanitizer {ran}: {cell(tool[0].note)}", ""]
        if kind == "bench":
            lines += bench_table(group)
        elif shown:
            lines += ["| item | result | note |", "|---|---|---|"]
            lines += [f"| {cell(v.id)} | {v.result} | {cell(v.note)} |"
                      for v in shown]
        if kind == "sweep" and not verbose:
            lines.append(f"{counts[PASS]} of {len(group)} round trips give "
                         "the host reference's data" +
                         (" (failures above)" if shown else "") + ".")
        lines.append("")
    failures = [v for v in verdicts if v.result == FAIL]
    if failures:
        lines.append("## Failures")
        lines.append("")
        for v in failures:
            lines.append(f"### {v.id}: {v.note}")
            if v.description:
                lines.append(f"{v.description}")
            if v.details:
                lines += ["```text", v.details, "```"]
            lines.append("")
    counts = {r: sum(1 for v in verdicts if v.result == r and
                     v.kind != "sanitizer-tool")
              for r in (PASS, FAIL, SKIP)}
    lines.append(f"gpu-check: {counts[PASS]} passed, {counts[FAIL]} failed, "
                 f"{counts[SKIP]} skipped")
    return lines


def bench_table(group):
    rows = ["| program | result | measured | ms | GB/s |",
            "|---|---|---|---|---|"]
    for v in group:
        if not v.walls:
            rows.append(f"| {cell(v.id)} | {v.result} | {cell(v.note)} | | |")
        for what, ms, gbps in v.walls:
            rows.append(f"| {cell(v.id)} | {v.result} | {cell(what)} | "
                        f"{ms:.3f} | {gbps or ''} |")
    rows.append("")
    rows.append("Wall-clock time of the harness's timed calls "
                "(utils/transfer-performance/generate.py, "
                "TRANSFER_PERFORMANCE_WALL_TIME); against the simulator it "
                "is the simulator's own time on the CPU, no GPU figure.")
    return rows


def compare(a: Results, b: Results, verdicts_a, verdicts_b) -> List[str]:
    """The items whose verdict or output differs between two runs."""
    lines = [f"## Differences: {a.info.get('mode')} run of "
             f"{a.info.get('date')} against {b.info.get('mode')} run of "
             f"{b.info.get('date')}", ""]
    other = {v.id: v for v in verdicts_b}
    differences = 0
    for v in verdicts_a:
        w = other.get(v.id)
        if w is None or v.kind in ("bench", "sanitizer", "sanitizer-tool"):
            continue
        if v.result != w.result:
            lines.append(f"- {v.id}: {v.result} here, {w.result} there"
                         f" ({cell(v.note)} / {cell(w.note)})")
            differences += 1
            continue
        ra, rb = a.records.get(v.id, {}), b.records.get(v.id, {})
        oa, ob = (normalize(a.read(ra.get("output"))),
                  normalize(b.read(rb.get("output"))))
        # The simulator's own diagnostics are not part of the data.
        strip = lambda t: "\n".join(  # noqa: E731
            l for l in t.splitlines() if not l.startswith("etcopy-cuda-sim"))
        if v.kind in ("test", "sweep") and strip(oa) != strip(ob):
            lines.append(f"- {v.id}: same verdict, different output:\n"
                         + "  " + first_difference(strip(ob), strip(oa))
                         .replace("\n", "\n  "))
            differences += 1
    if not differences:
        lines.append("No program's verdict or output differs.")
    lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", help="gpu-check-results.tar.gz or its "
                        "folder")
    parser.add_argument("--compare", metavar="OTHER",
                        help="another run's results to compare with")
    parser.add_argument("--filecheck-dir", default="/usr/lib/llvm-22/bin",
                        help="where FileCheck is (default: %(default)s)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list every round trip")
    args = parser.parse_args()
    results = Results(args.results)
    verdicts = Checker(results, args.filecheck_dir, args.verbose).verdicts()
    lines = report(results, verdicts, args.verbose)
    if args.compare:
        other = Results(args.compare)
        other_verdicts = Checker(other, args.filecheck_dir,
                                 False).verdicts()
        lines[-1:-1] = compare(results, other, verdicts, other_verdicts)
    print("\n".join(lines))
    return 1 if any(v.result == FAIL for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
