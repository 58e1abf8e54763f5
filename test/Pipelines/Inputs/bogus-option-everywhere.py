#!/usr/bin/env python3
"""Gives an unknown option to every etcopy pass and pipeline.

  bogus-option-everywhere.py ETCOPY_OPT INPUT PASSES.md...

The passes are those of the generated pass references (docs/Passes/*.md,
kept equal to the .td files by test/Docs/generated-docs.test), so a new
pass is tried without changing this script; the pipelines are
etcopy-to-cuda and etcopy-to-host. For each it prints
`NAME (exit CODE): FIRST LINE OF STDERR`.
"""
import re
import subprocess
import sys

etcopy_opt, source, pages = sys.argv[1], sys.argv[2], sys.argv[3:]
names = []
for page in pages:
    with open(page) as f:
        names += re.findall(r"^### `-([a-z0-9-]+)`", f.read(), re.M)
for name in sorted(names) + ["etcopy-to-cuda", "etcopy-to-host"]:
    proc = subprocess.run(
        [etcopy_opt, source, f"--pass-pipeline=builtin.module({name}{{bogus=1}})"],
        capture_output=True, text=True)
    first = proc.stderr.splitlines()[0] if proc.stderr else ""
    print(f"{name} (exit {proc.returncode}): {first}")
