#!/usr/bin/env python3
"""Runs the MLIR examples of hand-written docs, so that they cannot rot.

Every ```mlir block of a page is handed to etcopy-opt and must parse and
verify. A block preceded by a directive comment is instead the expected
output of running etcopy-opt on the nearest preceding plain block:

    <!-- run: --etcopy-to-cuda -->                 full output
    <!-- run: --etcopy-to-cuda; grep: @cuda -->    only lines matching a regex

  doc-examples.py --etcopy-opt BIN [--update] PAGE.md...

checks (exit 1 with a diff on drift), or with --update rewrites the
expected blocks from the current etcopy-opt.
"""
import argparse
import difflib
import re
import shlex
import subprocess
import sys

BLOCK = re.compile(
    r"(?:<!--\s*run:\s*(?P<args>[^;]*?)(?:;\s*grep:\s*(?P<grep>.*?))?\s*-->\n)?"
    r"```mlir\n(?P<body>.*?)```", re.S)


def run(etcopy_opt, args, text):
    proc = subprocess.run([etcopy_opt, *shlex.split(args), "-"], input=text,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def process(path, etcopy_opt, update):
    with open(path) as f:
        page = f.read()
    errors = []
    source = None
    pieces, last = [], 0
    for match in BLOCK.finditer(page):
        body = match.group("body")
        line = page.count("\n", 0, match.start("body")) + 1
        if match.group("args") is None:
            code, _, err = run(etcopy_opt, "", body)
            if code:
                errors.append(f"{path}:{line}: example does not verify:\n{err}")
            source = body
            continue
        if source is None:
            errors.append(f"{path}:{line}: 'run:' block with no input above")
            continue
        code, out, err = run(etcopy_opt, match.group("args"), source)
        if code:
            errors.append(f"{path}:{line}: etcopy-opt {match.group('args')} "
                          f"failed:\n{err}")
            continue
        if match.group("grep"):
            pattern = re.compile(match.group("grep"))
            out = "".join(l + "\n" for l in out.splitlines()
                          if pattern.search(l))
        if out != body:
            if update:
                pieces.append(page[last:match.start("body")] + out)
                last = match.end("body")
            else:
                diff = difflib.unified_diff(body.splitlines(True),
                                            out.splitlines(True),
                                            "documented", "actual")
                errors.append(f"{path}:{line}: output of etcopy-opt "
                              f"{match.group('args')} drifted "
                              f"(rerun with --update):\n" + "".join(diff))
    if update and pieces:
        with open(path, "w") as f:
            f.write("".join(pieces) + page[last:])
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etcopy-opt", required=True)
    parser.add_argument("--update", action="store_true")
    parser.add_argument("pages", nargs="+")
    options = parser.parse_args()
    errors = []
    for page in options.pages:
        errors += process(page, options.etcopy_opt, options.update)
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
