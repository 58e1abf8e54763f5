#!/usr/bin/env python3
#===- fault-sweep.py - Fail every call of a program on the CUDA simulator -===#
#
# Usage: fault-sweep.py [--kind KIND] PROGRAM [ARGUMENT...]
#
# Runs PROGRAM once on libetcopy_cuda_sim with ETCOPY_CUDA_SIM_STATS=1 and
# reads how many calls of KIND (default `any`, every counted API call) it
# makes from the `stats: calls:` line; that run must exit with status 0 and
# print no simulator error. Then it runs PROGRAM once per call N with
# ETCOPY_CUDA_SIM_FAIL=KIND:N and prints one line per run:
#
#   KIND:N ENTRY_POINT ERROR exit=STATUS [FLAGS...]
#
# ENTRY_POINT and ERROR are taken from the simulator's `injected failure`
# line (`-` if there was none). STATUS is the exit status, or
# `signal:NAME` if the program was killed. FLAGS, in this order, only when
# they apply:
#   reported         ERROR appears on the program's standard output;
#   leaked-memory    the leak check reported memory never freed (an error);
#   leaked-handles   it reported streams, events or registrations (warnings);
#   unsynchronised   queued work was never synchronised before exit;
#   other-errors=K   K further `etcopy-cuda-sim: error:` lines.
#
# The first line printed is `calls: KIND=COUNT`. FileCheck the output to
# assert how the program copes with each failure.
#
#===----------------------------------------------------------------------===#

import argparse
import os
import re
import signal
import subprocess
import sys

PREFIX = "etcopy-cuda-sim: "
INJECTED = re.compile(r"etcopy-cuda-sim: error: (\S+): injected (?:allocation )?"
                      r"failure: .* fails(?: with (\S+))? because ")


def run(command, extra_env):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("ETCOPY_CUDA_SIM_")}
    env.update(extra_env)
    return subprocess.run(command, env=env, capture_output=True, text=True)


def count_calls(command, kind):
    proc = run(command, {"ETCOPY_CUDA_SIM_STATS": "1"})
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith(PREFIX + "error:")]
    if proc.returncode != 0 or errors:
        sys.exit(f"fault-sweep: the run without failures exited with "
                 f"{proc.returncode}:\n{proc.stdout}{proc.stderr}")
    match = re.search(r"stats: calls: .*\b" + re.escape(kind) + r"=(\d+)",
                      proc.stderr)
    if not match:
        sys.exit(f"fault-sweep: no 'stats: calls:' count for {kind}:\n"
                 f"{proc.stderr}")
    return int(match.group(1))


def describe(kind, ordinal, proc):
    entry, error = "-", "-"
    other_errors = 0
    for line in proc.stderr.splitlines():
        match = INJECTED.match(line)
        if match:
            entry = match.group(1)
            # Injected allocation failures always return out of memory.
            error = match.group(2) or "cudaErrorMemoryAllocation"
        elif line.startswith(PREFIX + "error: leak:"):
            pass
        elif line.startswith(PREFIX + "error:"):
            other_errors += 1
    if proc.returncode < 0:
        status = "signal:" + signal.Signals(-proc.returncode).name
    else:
        status = str(proc.returncode)
    fields = [f"{kind}:{ordinal}", entry, error, f"exit={status}"]
    if error != "-" and error in proc.stdout:
        fields.append("reported")
    if PREFIX + "error: leak:" in proc.stderr:
        fields.append("leaked-memory")
    if PREFIX + "warning: leak:" in proc.stderr:
        fields.append("leaked-handles")
    if "never synchronised before exit" in proc.stderr:
        fields.append("unsynchronised")
    if other_errors:
        fields.append(f"other-errors={other_errors}")
    return " ".join(fields)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kind", default="any")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if not args.command:
        parser.error("missing PROGRAM")
    count = count_calls(args.command, args.kind)
    print(f"calls: {args.kind}={count}")
    for ordinal in range(1, count + 1):
        spec = f"{args.kind}:{ordinal}"
        proc = run(args.command, {"ETCOPY_CUDA_SIM_FAIL": spec})
        print(describe(args.kind, ordinal, proc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
