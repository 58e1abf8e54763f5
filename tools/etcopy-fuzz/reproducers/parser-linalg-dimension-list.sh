#!/usr/bin/env bash
# Null dereference in the custom parsers of linalg.transpose, linalg.broadcast
# and linalg.reduce (libMLIR.so 22), found by etcopy-pipeline-fuzzer: when the
# list after `permutation =` (or `dimensions =`) does not parse, the parser
# reports the error and then uses the null attribute (SIGSEGV in
# Attribute::getContext, from TransposeOp::parse).
# Usage: parser-linalg-dimension-list.sh TOOL   (build/bin/etcopy-opt, mlir-opt-22)
# Exits 0 when the tool rejects the input, 1 when it crashes.
set -u
tool=${1:?usage: parser-linalg-dimension-list.sh TOOL}
input=$(mktemp --suffix=.mlir)
trap 'rm -f "$input"' EXIT
cat >"$input" <<'MLIR'
func.func @f(%x: tensor<2x2xf32>, %init: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %t = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) permutation = ,
  return %t : tensor<2x2xf32>
}
MLIR
"$tool" "$input" >/dev/null 2>&1
status=$?
if ((status > 128)); then
  echo "$tool: killed by signal $((status - 128)) on 'permutation = ,'"
  exit 1
fi
echo "$tool: exit status $status on 'permutation = ,'"
