# Prints what utils/compile-time-benchmark/benchmark.py makes of an
# --mlir-timing report or of printed output:
#   benchmark-report.py SRC_ROOT timing FILE   the seconds it times
#   benchmark-report.py SRC_ROOT count FILE    the instructions it counts
#                                              (--count instructions)
#   benchmark-report.py SRC_ROOT output FILE   copies, bytes, bytes per copy
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "utils", "compile-time-benchmark"))
import benchmark  # noqa: E402

kind, path = sys.argv[2], sys.argv[3]
with open(path) as f:
    text = f.read()
if kind == "timing":
    print(f"seconds={benchmark.pass_manager_seconds(text):.4f}")
elif kind == "count":
    print(f"instructions={benchmark.instructions(text)}")
else:
    per_copy = benchmark.bytes_per_copy(text)
    print(f"copies={len(benchmark.COPY.findall(text))} "
          f"bytes={len(text.encode())} "
          f"per-copy={'none' if per_copy is None else int(per_copy)}")
