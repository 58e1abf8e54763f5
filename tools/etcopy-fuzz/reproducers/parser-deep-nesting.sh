#!/usr/bin/env bash
# Stack overflow in MLIR's parser (libMLIR.so 22), found by
# etcopy-pipeline-fuzzer: an attribute nested 8000 `[` deep. The parser
# recurses (parseAttribute -> parseCommaSeparatedListUntil -> ...) once per
# level with no limit; with an 8 MiB stack the tool dies with SIGSEGV.
# Usage: parser-deep-nesting.sh TOOL   (build/bin/etcopy-opt, mlir-opt-22)
# Exits 0 when the tool rejects or accepts the input, 1 when it crashes.
set -u
tool=${1:?usage: parser-deep-nesting.sh TOOL}
input=$(mktemp --suffix=.mlir)
trap 'rm -f "$input"' EXIT
python3 -c "print('func.func @f() attributes {a = ' + '[' * 8000 + ']' * 8000 + '} { return }')" >"$input"
"$tool" "$input" >/dev/null 2>&1
status=$?
if ((status > 128)); then
  echo "$tool: killed by signal $((status - 128)) on 8000 nested '['"
  exit 1
fi
echo "$tool: exit status $status on 8000 nested '['"
