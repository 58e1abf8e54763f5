#!/usr/bin/env python3
"""Runs the examples of the docs, so that they cannot rot.

Every ```mlir block of a page is handed to etcopy-opt on its own and must
parse and verify; a failure names the page, line, block number and the
section it is in. A block preceded by a directive comment is instead the
expected output of running etcopy-opt on the nearest preceding plain block:

    <!-- run: --etcopy-to-cuda -->                 full output
    <!-- run: --etcopy-to-cuda; grep: @cuda -->    only lines matching a regex

Code of any kind (fenced blocks and `inline code`) that runs clang must
name LLVM 22's: clang-22, clang++-22 or /usr/lib/llvm-22/bin/clang[++].
Debian 12's plain clang is clang 14, which rejects LLVM 22's IR.

  doc-examples.py --etcopy-opt BIN [--update] PAGE.md|DIR...

checks (exit 1 with a diff on drift), or with --update rewrites the
expected blocks from the current etcopy-opt. A DIR stands for every *.md
directly in it, so that new pages are checked without naming them. It
prints how many blocks of each kind every page has.

  doc-examples.py --extract LANG [--section HEADING] [--block N] PAGE.md

prints the ```LANG blocks of a page (those under the heading HEADING, its
text without the #s, if given; only the Nth of them, from 1, if given) in
order, so that tests compile and run the code of a page as a reader
pasting it would: the C++ of docs/Embedding.md, the commands of README.md.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys

BLOCK = re.compile(
    r"(?:<!--\s*run:\s*(?P<args>[^;]*?)(?:;\s*grep:\s*(?P<grep>.*?))?\s*-->\n)?"
    r"```mlir\n(?P<body>.*?)```", re.S)

# Code is fenced blocks (indented up to three spaces, as in lists) and inline
# code spans outside them; a clang token is a bare or path-qualified clang
# or clang++, which only LLVM 22's own directory may qualify.
FENCE = re.compile(r"^ {0,3}```.*?^ {0,3}```", re.S | re.M)
INLINE_CODE = re.compile(r"`([^`]+)`")
CLANG = re.compile(r"(?:\S*/)?clang(?:\+\+)?")
LLVM_BIN = "/usr/lib/llvm-22/bin/"


def check_clang(path, page):
    """Errors for code that runs a clang other than LLVM 22's."""
    snippets = [(m.start(), m.group()) for m in FENCE.finditer(page)]
    prose = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), page)
    snippets += [(m.start(1), m.group(1)) for m in INLINE_CODE.finditer(prose)]
    errors = []
    for start, code in sorted(snippets):
        for token in re.finditer(r"[^\s;|&()'\"]+", code):
            name = token.group()
            if CLANG.fullmatch(name) and not name.startswith(LLVM_BIN):
                line = page.count("\n", 0, start + token.start()) + 1
                errors.append(
                    f"{path}:{line}: '{name}' may be Debian 12's clang 14, "
                    f"which rejects LLVM 22 IR; write "
                    f"{os.path.basename(name)}-22 or "
                    f"{LLVM_BIN}{os.path.basename(name)}")
    return errors


def expand_pages(paths):
    """PAGE.md stays; a directory becomes the *.md files directly in it."""
    pages = []
    for path in paths:
        if os.path.isdir(path):
            pages += sorted(os.path.join(path, name)
                            for name in os.listdir(path)
                            if name.endswith(".md"))
        else:
            pages.append(path)
    return pages


def run(etcopy_opt, args, text):
    proc = subprocess.run([etcopy_opt, *shlex.split(args), "-"], input=text,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def section(page, offset):
    """The last Markdown heading before `offset`, outside code blocks."""
    prose = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()),
                      page[:offset])
    headings = re.findall(r"^#+ .*$", prose, re.M)
    return headings[-1] if headings else "(no heading)"


def process(path, etcopy_opt, update):
    with open(path) as f:
        page = f.read()
    errors = check_clang(path, page)
    source = None
    pieces, last = [], 0
    examples = outputs = 0
    for number, match in enumerate(BLOCK.finditer(page), start=1):
        body = match.group("body")
        line = page.count("\n", 0, match.start("body")) + 1
        if match.group("args") is None:
            examples += 1
            code, _, err = run(etcopy_opt, "", body)
            if code:
                errors.append(
                    f"{path}:{line}: mlir block {number}, under "
                    f"'{section(page, match.start())}', does not parse and "
                    f"verify on its own:\n{err}")
            source = body
            continue
        outputs += 1
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
    print(f"{path}: {examples} mlir examples, {outputs} expected outputs",
          flush=True)
    return errors


def extract(path, lang, heading, block):
    """The ```lang blocks of the page at `path`, concatenated."""
    with open(path) as f:
        page = f.read()
    fence = re.compile(r"^ {0,3}```" + re.escape(lang) + r"\n(.*?)^ {0,3}```",
                       re.S | re.M)
    blocks = [m.group(1) for m in fence.finditer(page)
              if heading is None
              or section(page, m.start()).lstrip("#").strip() == heading]
    if block is not None:
        if not 1 <= block <= len(blocks):
            sys.exit(f"{path}: no {lang} block {block} "
                     f"(there are {len(blocks)})")
        blocks = [blocks[block - 1]]
    if not blocks:
        sys.exit(f"{path}: no {lang} block"
                 + (f" under '{heading}'" if heading else ""))
    return "".join(blocks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etcopy-opt")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--extract", metavar="LANG")
    parser.add_argument("--section", metavar="HEADING")
    parser.add_argument("--block", type=int, metavar="N")
    parser.add_argument("pages", nargs="+", metavar="PAGE.md|DIR")
    options = parser.parse_args()
    if options.extract:
        for page in options.pages:
            sys.stdout.write(extract(page, options.extract, options.section,
                                     options.block))
        return 0
    if not options.etcopy_opt:
        parser.error("--etcopy-opt is required to check pages")
    errors = []
    for page in expand_pages(options.pages):
        errors += process(page, options.etcopy_opt, options.update)
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
