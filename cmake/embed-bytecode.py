#!/usr/bin/env python3
#===- embed-bytecode.py - Embed an MLIR module in C++ as bytecode ---------===#
#
# Usage: embed-bytecode.py strip INPUT.mlir OUTPUT.mlir
#        embed-bytecode.py embed INPUT.mlirbc OUTPUT.inc
#
# `strip` copies the module of INPUT without the attributes of the module
# itself (data layout, target triple), which mlir-translate --import-llvm puts
# on the line that opens it: the module that receives the ops has its own, and
# reading them would need dialects (DLTI) the reader may not have loaded.
#
# `embed` writes the bytes of INPUT (the module as MLIR bytecode, written by
# mlir-opt --emit-bytecode) as a comma-separated list of C++ integer
# literals, for the includer to put in an array:
#
#   static const unsigned char bytes[] = {
#   #include "X.mlirbc.inc"
#   };
#
#===----------------------------------------------------------------------===#

import re
import sys

if len(sys.argv) != 4 or sys.argv[1] not in ("strip", "embed"):
    sys.exit("usage: embed-bytecode.py {strip|embed} INPUT OUTPUT")
mode, source, output = sys.argv[1:]

if mode == "strip":
    with open(source) as f:
        text = f.read()
    text, count = re.subn(r"^module attributes [^\n]*\n", "module {\n", text,
                          count=1, flags=re.MULTILINE)
    if count != 1:
        sys.exit(f"{source}: expected a module with attributes")
    with open(output, "w") as f:
        f.write(text)
else:
    with open(source, "rb") as f:
        data = f.read()
    with open(output, "w") as f:
        f.write(f"// Generated from {source} by embed-bytecode.py; do not "
                "edit.\n")
        for start in range(0, len(data), 16):
            f.write(",".join(str(b) for b in data[start:start + 16]) + ",\n")
