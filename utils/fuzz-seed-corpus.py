#!/usr/bin/env python3
# ===- fuzz-seed-corpus.py - Seed corpora of etcopy's fuzz targets --------===#
#
# Writes the seed corpus of a fuzz target into a directory, one file per
# input, named by the SHA-1 of its content (so reruns add nothing twice):
#
#   pipeline  every MLIR input of the test suite and the examples, split at
#             `// -----` as -split-input-file does;
#   runtime   device specifications, and signature and arena tables as the
#             compiler exports them (little-endian structs).
#
# Usage: utils/fuzz-seed-corpus.py {pipeline|runtime} OUTPUT_DIR
#
# ===----------------------------------------------------------------------===#

import hashlib
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def pipeline_seeds():
    files = sorted(ROOT.glob("test/**/*.mlir")) + sorted(
        ROOT.glob("examples/**/*.mlir"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
            chunk = chunk.strip()
            if chunk:
                yield (chunk + "\n").encode()


def runtime_seeds():
    for spec in ["cpu", "cuda", "cuda:0", "CUDA:1", "cpu:0", "cuda:2147483647",
                 "cuda:2147483648", "cuda:", "cuda:x", ":", ""]:
        yield spec.encode()
    # etcopy_value_desc: kind, device_kind, ordinal, rank (int32), bytes
    # (int64); the first byte is the number of arguments.
    value = struct.Struct("<iiiiq")
    memref_on_cuda = value.pack(1, 1, 0, 2, 4)
    scalar = value.pack(0, 0, 0, 0, 8)
    unranked_host = value.pack(2, 0, 0, 0, 4)
    yield bytes([2]) + memref_on_cuda + scalar + unranked_host
    yield bytes([0]) + memref_on_cuda
    # etcopy_arena_desc: device_kind, ordinal (int32), size, alignment
    # (uint64).
    arena = struct.Struct("<iiQQ")
    yield arena.pack(0, 0, 256, 64) + arena.pack(0, 0, 0, 16)
    yield arena.pack(1, 0, 1024, 256)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("pipeline", "runtime"):
        sys.exit("usage: fuzz-seed-corpus.py {pipeline|runtime} OUTPUT_DIR")
    out = pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    seeds = pipeline_seeds() if sys.argv[1] == "pipeline" else runtime_seeds()
    count = 0
    for seed in seeds:
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        count += 1
    print(f"{count} {sys.argv[1]} seeds in {out}")


if __name__ == "__main__":
    main()
