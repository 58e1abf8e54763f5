#!/usr/bin/env python3
#===- embed-mlir.py - Embed an MLIR module in C++ -------------------------===#
#
# Usage: embed-mlir.py INPUT.mlir OUTPUT.inc
#
# Writes the module of INPUT as a comma-separated list of C++ raw string
# literals, each under the 64 KiB that C++ compilers must support, to be
# concatenated by the includer:
#
#   static const char *const parts[] = {
#   #include "X.mlir.inc"
#   };
#
# The attributes of the module itself (data layout, target triple), which
# mlir-translate --import-llvm puts on the line that opens it, are dropped: the
# module that receives the text has its own.
#
#===----------------------------------------------------------------------===#

import re
import sys

DELIMITER = "mlir"
LIMIT = 32 * 1024

source, output = sys.argv[1], sys.argv[2]
with open(source) as f:
    text = f.read()
text = re.sub(r"^module attributes [^\n]*\n", "module {\n", text, count=1,
              flags=re.MULTILINE)
if ")" + DELIMITER + '"' in text:
    sys.exit(f"{source} contains the raw string delimiter )" + DELIMITER + '"')

parts, current = [], ""
for line in text.splitlines(keepends=True):
    if current and len(current) + len(line) > LIMIT:
        parts.append(current)
        current = ""
    current += line
parts.append(current)

with open(output, "w") as f:
    f.write(f"// Generated from {source} by embed-mlir.py; do not edit.\n")
    for part in parts:
        f.write(f'R"{DELIMITER}({part}){DELIMITER}",\n')
