#!/usr/bin/env python3
#===- error-sweep.py - Fail each CUDA call of a program that keeps going --===#
#
# Usage: error-sweep.py [--valgrind] PROGRAM
#
# PROGRAM runs lowered code with an error policy that prints
# `handler: LOCATION: CALL (...)` and returns. This runs it once on the CUDA
# simulator to count its API calls (it must complete without a report),
# then once per call N with ETCOPY_CUDA_SIM_FAIL=any:N (and the leak check
# off: a failed free leaks), and prints one line per run:
#
#   any:N ENTRY_POINT -> CALL at LOCATION [completed] exit=STATUS
#
# ENTRY_POINT is the function the simulator failed, CALL and LOCATION the
# first failure the program's policy reported, `completed` whether the
# program ran to its end. With --valgrind, every run is under valgrind's
# memcheck, and the line ends with `memcheck=clean`, or with
# `memcheck=errors` followed by valgrind's report.
#
#===----------------------------------------------------------------------===#

import concurrent.futures
import os
import re
import subprocess
import sys

INJECTED = re.compile(r"etcopy-cuda-sim: error: (\S+): injected failure")
HANDLER = re.compile(r"^handler: (\S+): (\S+) ", re.MULTILINE)


def run(command, extra_env):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("ETCOPY_CUDA_SIM_")}
    env.update(extra_env)
    return subprocess.run(command, env=env, capture_output=True, text=True)


valgrind = sys.argv[1] == "--valgrind"
program = sys.argv[-1]
first = run([program], {"ETCOPY_CUDA_SIM_STATS": "1"})
calls = re.search(r"stats: calls: any=(\d+)", first.stderr)
if first.returncode != 0 or "handler:" in first.stdout or not calls:
    sys.exit(f"error-sweep: the run without failures did not complete "
             f"cleanly:\n{first.stdout}{first.stderr}")
print(f"calls: {calls.group(1)}")

prefix = []
if valgrind:
    prefix = ["valgrind", "--quiet", "--tool=memcheck", "--error-exitcode=99",
              "--leak-check=no"]


def sweep(n):
    """The line for the run that fails the n-th call."""
    proc = run(prefix + [program], {"ETCOPY_CUDA_SIM_FAIL": f"any:{n}",
                                    "ETCOPY_CUDA_SIM_LEAK_CHECK": "0"})
    injected = INJECTED.search(proc.stderr)
    report = HANDLER.search(proc.stdout)
    line = f"any:{n} {injected.group(1) if injected else '-'} -> "
    line += f"{report.group(2)} at {report.group(1)}" if report else "nothing"
    if "completed" in proc.stdout:
        line += " completed"
    line += f" exit={proc.returncode}"
    if valgrind:
        errors = [l for l in proc.stderr.splitlines() if l.startswith("==")]
        line += " memcheck=" + ("errors\n" + "\n".join(errors)
                                if errors else "clean")
    return line


# The runs are independent: as many at a time as there are processors.
with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
    for line in pool.map(sweep, range(1, int(calls.group(1)) + 1)):
        print(line)
