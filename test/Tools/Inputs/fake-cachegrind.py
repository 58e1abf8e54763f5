# A stand-in for valgrind in benchmark.py --count (--valgrind): it runs
# nothing, writes an empty output file and prints a cachegrind summary
# whose count it computes from the flags and from N, the size the input's
# file name ends with (CASE-N.mlir):
#   60 M (the process) + 1 M per unit, plus
#   --quadratic     0.01 M x N^2
#   --exponential   0.1 M x 2^N
#   --steeper       0.1 M x 3^N
#   --hang          never ends (for --timeout)
# so that the growth checks can be tested where valgrind cannot run.
#   fake-cachegrind.py VALGRIND-OPTIONS... ETCOPY-OPT INPUT FLAGS... -o OUTPUT
import os
import re
import sys
import time

args = sys.argv[1:]
while args[0].startswith("--"):
    args.pop(0)  # valgrind's own options
flags = args[2:]
n = int(re.search(r"-(\d+)\.mlir$", args[1]).group(1))
if "--hang" in flags:
    time.sleep(3600)
count = 60_000_000 + 1_000_000 * n
if "--quadratic" in flags:
    count += 10_000 * n * n
if "--exponential" in flags:
    count += 100_000 * 2 ** n
if "--steeper" in flags:
    count += 100_000 * 3 ** n
with open(flags[flags.index("-o") + 1], "w"):
    pass
print(f"==1== I   refs:      {count:,}", file=sys.stderr)
