#!/usr/bin/env python3
"""Checks that every ELF file of an install prefix runs from where it is.

  check-relocatable.py PREFIX LLVM_LIB_DIR

For each executable and shared library under PREFIX (archives are skipped),
prints `PATH: RUNPATH ENTRIES` (PATH relative to PREFIX, sorted) and fails
when an entry is neither $ORIGIN-relative nor LLVM_LIB_DIR, or when the
loader, run without LD_LIBRARY_PATH, cannot find one of its libraries.
"""
import os
import re
import subprocess
import sys


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def runpath(path):
    out = subprocess.run(["llvm-readelf", "--dynamic-table", path],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]",
                      out)
    return match.group(1).split(":") if match else []


def missing_libraries(path, env):
    out = subprocess.run(["ldd", path], capture_output=True, text=True,
                         env=env).stdout
    return [line.split()[0] for line in out.splitlines() if "not found" in line]


def main():
    prefix, llvm_lib_dir = sys.argv[1:]
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    files = sorted(
        os.path.join(root, name)
        for root, _, names in os.walk(prefix) for name in names
        if not os.path.islink(os.path.join(root, name))
        and is_elf(os.path.join(root, name)))
    errors = []
    for path in files:
        name = os.path.relpath(path, prefix)
        entries = runpath(path)
        print(f"{name}: RUNPATH {':'.join(entries)}")
        for entry in entries:
            if not entry.startswith("$ORIGIN") and entry != llvm_lib_dir:
                errors.append(f"{name}: RUNPATH entry '{entry}' is neither "
                              f"$ORIGIN-relative nor {llvm_lib_dir}")
        for library in missing_libraries(path, env):
            errors.append(f"{name}: {library} not found")
    if not files:
        errors.append(f"no ELF file under {prefix}")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
