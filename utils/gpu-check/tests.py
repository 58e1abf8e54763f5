# ===- tests.py - The GPU variants of the execution tests -----------------=== #
#
# Reads the RUN lines of the execution tests (test/Execution) the way lit
# does (continuations, `%if` with lit's own expression evaluator, lit's
# shell parser) and plans, for every line that only runs where a GPU
# answers (`%if cuda-gpu %{ ... %}`, or `cuda-gpus-2` for two devices), an
# ahead-of-time program for the GPU check bundle:
#
#   * `PRODUCER | [env ...] [not] %run_gpu[,LIBS] [2>&1] | CONSUMER`, or
#     `%run_gpu < %t.FILE`: the lowered module (the producer's output, or
#     the file an earlier RUN line wrote) is translated to LLVM IR, compiled
#     with clang-22 and linked as an executable, as mlir-runner would JIT
#     it; shared libraries named after `%run_gpu,` (delegates the test
#     builds with `%cc ... %cudart`) are built and linked in;
#   * `[env ...] [not] %t.EXE [2>&1] [| CONSUMER]`: the executable an
#     earlier RUN line links against `%cudart` is built the same way.
#
# The consumer (FileCheck with the test's prefixes, and any filter before
# it) runs later, on the CPU machine, over the output the program printed
# on the GPU. A GPU line this cannot build is a skipped variant with the
# reason, never dropped: the bundle's report lists it.
#
# Used by build.py; needs lit's Python package (LLVM 22's utils/lit).
#
# ===----------------------------------------------------------------------=== #
"""Plans the GPU variants of the execution tests."""

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

LIT_DIR = "/usr/lib/llvm-22/utils/lit"
if LIT_DIR not in sys.path:
    sys.path.insert(0, LIT_DIR)
from lit.BooleanExpression import BooleanExpression  # noqa: E402
from lit.ShCommands import Command, Pipeline, Seq  # noqa: E402
from lit.ShUtil import ShParser  # noqa: E402
from lit.TestRunner import applySubstitutions  # noqa: E402

# The features of the three machines a RUN line is read for.
CPU_FEATURES = {"cuda-toolkit"}
GPU_FEATURES = {"cuda-toolkit", "cuda-gpu"}
GPUS_2_FEATURES = {"cuda-toolkit", "cuda-gpu", "cuda-gpus-2"}

# Substitutions that run or link programs for the simulator or the JIT: a
# GPU program cannot depend on what they make.
SIMULATOR_ONLY = ("%run_sim", "%run_host", "%etcopy_cuda_sim",
                  "%etcopy_runtime_tests", "mlir-runner")


class Unsupported(Exception):
    """A GPU line the bundle cannot build; the message says why."""


@dataclass
class RunLine:
    number: int
    text: str


@dataclass
class Program:
    """How the bundle builds and runs one GPU variant."""
    # Commands (shell text, lit substitutions unexpanded) to run at build
    # time, in order: the RUN lines that write files the program needs.
    build_lines: List[RunLine] = field(default_factory=list)
    # %run_gpu: the lowered module, from `mlir_file` (a %t path) or the
    # output of `producer` (shell text); `libraries`: %t shared libraries.
    # Otherwise `executable` (a %t path) built by build_lines.
    mlir_file: Optional[str] = None
    producer: Optional[str] = None
    libraries: List[str] = field(default_factory=list)
    executable: Optional[str] = None
    arguments: List[str] = field(default_factory=list)
    stdin: Optional[str] = None
    env: Dict[str, str] = field(default_factory=dict)
    expect_failure: bool = False
    merge_stderr: bool = False
    # Shell text run on the CPU machine with the program's output as input
    # (lit substitutions unexpanded), or None to check the exit status only.
    consumer: Optional[str] = None


@dataclass
class Variant:
    test: str          # path relative to the test/ directory
    line: int
    devices: int
    command: str       # the GPU command, `%if` resolved
    program: Optional[Program] = None
    skip: Optional[str] = None

    @property
    def id(self):
        return f"{self.test}:{self.line}"

    @property
    def name(self):
        """Unique among the variants: the path below the test folder."""
        stem = os.path.splitext(self.test)[0].split("/", 1)[-1]
        return f"{stem.replace('/', '-')}-L{self.line}"


# ===----------------------------------------------------------------------=== #
# Reading a test
# ===----------------------------------------------------------------------=== #

def read_directives(path):
    """(RUN lines, REQUIRES expressions, UNSUPPORTED expressions) of a test,
    continuations joined as lit joins them."""
    runs, requires, unsupported = [], [], []
    pending = None
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            for keyword, into in (("REQUIRES:", requires),
                                  ("UNSUPPORTED:", unsupported)):
                match = re.search(keyword + r"(.*)$", text)
                if match:
                    into.extend(e.strip() for e in match.group(1).split(",")
                                if e.strip())
            match = re.search(r"RUN:(.*)$", text)
            if not match:
                continue
            part = match.group(1).rstrip()
            if pending is None:
                pending = RunLine(number, "")
            if part.endswith("\\"):
                pending.text += part[:-1]
                continue
            pending.text = (pending.text + part).strip()
            runs.append(pending)
            pending = None
    return runs, requires, unsupported


def expand(text, features):
    """The line with every `%if` resolved for `features` (lit's own code)."""
    return applySubstitutions([text], [], conditions=set(features))[0]


def pipelines(text):
    """The pipelines of a command, in order; && and ; only."""
    tree = ShParser(text, pipefail=True).parse()
    out = []

    def walk(node):
        if isinstance(node, Seq):
            if node.op not in ("&&", ";"):
                raise Unsupported(f"the command joins pipelines with "
                                  f"'{node.op}'")
            walk(node.lhs)
            walk(node.rhs)
        else:
            out.append(node)

    walk(tree)
    return out


def unwrap(command: Command):
    """(env, negated, argv) of a command behind `env A=B ...` and `not`."""
    args = list(command.args)
    env, negated = {}, False
    while args:
        if args[0] == "env":
            args.pop(0)
            while args and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[0]):
                key, _, value = args.pop(0).partition("=")
                env[key] = value
        elif args[0] == "not":
            args.pop(0)
            if args and args[0] == "--crash":
                raise Unsupported("the program is expected to crash")
            negated = not negated
        else:
            break
    for arg in args:
        if not isinstance(arg, str):
            raise Unsupported("the command has a glob")
    return env, negated, args


def quote_redirect(redirect):
    (op, *fd), target = redirect
    prefix = str(fd[0]) if fd else ""
    return f"{prefix}{op}{shlex.quote(target) if op != '>&' else target}"


def command_text(command: Command):
    return " ".join([shlex.quote(a) for a in command.args] +
                    [quote_redirect(r) for r in command.redirects])


def pipeline_text(commands):
    return " | ".join(command_text(c) for c in commands)


def outputs(command: Command):
    """The files a command writes: `-o FILE`, `-oFILE`, `> FILE`."""
    written = []
    args = command.args
    for i, arg in enumerate(args):
        if not isinstance(arg, str):
            continue
        if arg in ("-o", "--output") and i + 1 < len(args):
            written.append(args[i + 1])
        elif arg.startswith("-o") and len(arg) > 2 and "%t" in arg:
            written.append(arg[2:])
        elif arg.startswith("--output="):
            written.append(arg.partition("=")[2])
    for (op, *_), target in command.redirects:
        if op in (">", ">>"):
            written.append(target)
    return written


TEMP = re.compile(r"%t[\w.\-]*")


def temporaries(text):
    """The %t paths mentioned in a piece of shell text."""
    return TEMP.findall(text)


# ===----------------------------------------------------------------------=== #
# Planning a variant
# ===----------------------------------------------------------------------=== #

def producers(lines: List[RunLine], before: int, features):
    """For each %t path, the last line before line `before` that writes it
    (lines read for `features`)."""
    written = {}
    for line in lines:
        if line.number >= before:
            break
        text = expand(line.text, features)
        if not text:
            continue
        try:
            for pipeline in pipelines(text):
                for command in pipeline.commands:
                    for path in outputs(command):
                        written[path] = RunLine(line.number, text)
        except (Unsupported, ValueError):
            continue
    return written


def resolve(paths, written, plan: Program, seen):
    """Adds to plan.build_lines the lines that write `paths`, after the
    lines they need in turn."""
    for path in paths:
        line = written.get(path)
        if line is None:
            raise Unsupported(f"no earlier RUN line writes {path}")
        if line.number in seen:
            continue
        seen.add(line.number)
        for bad in SIMULATOR_ONLY:
            if re.search(r"(?<![\w%-])" + re.escape(bad) + r"(?![\w-])",
                         line.text):
                raise Unsupported(f"{path} comes from line {line.number}, "
                                  f"which uses {bad} (simulator or JIT only)")
        needed = []
        for pipeline in pipelines(line.text):
            for command in pipeline.commands:
                made = set(outputs(command))
                needed += [p for p in temporaries(command_text(command))
                           if p not in made and p != path]
        resolve(needed, written, plan, seen)
        plan.build_lines.append(line)


def is_program(args, built):
    head = args[0] if args else ""
    return head == "%run_gpu" or head.startswith("%run_gpu,") or \
        head in built


def plan(lines: List[RunLine], variant: Variant, features) -> Program:
    written = producers(lines, variant.line, features)
    program = Program()
    seen = set()
    stages = pipelines(variant.command)
    # Executables earlier lines (or earlier pipelines of this one) build.
    built = set(written)
    run_index = None
    for index, pipeline in enumerate(stages):
        for command in pipeline.commands:
            built.update(outputs(command))
        if any(is_program(unwrap(c)[2], built) for c in pipeline.commands):
            run_index = index
            break
    if run_index is None:
        raise Unsupported("the GPU line runs neither %run_gpu nor a program "
                          "an earlier line builds")
    if run_index + 1 != len(stages):
        raise Unsupported("the GPU line goes on after the program runs")
    # Pipelines before the run: build steps of this line.
    for pipeline in stages[:run_index]:
        text = pipeline_text(pipeline.commands)
        for command in pipeline.commands:
            for path in outputs(command):
                written[path] = RunLine(variant.line, text)
        resolve([p for p in temporaries(text)
                 if p not in {o for c in pipeline.commands
                              for o in outputs(c)}],
                written, program, seen)
        program.build_lines.append(RunLine(variant.line, text))
        seen.add(variant.line)
    commands = stages[run_index].commands
    position = next(i for i, c in enumerate(commands)
                    if is_program(unwrap(c)[2], built))
    env, negated, args = unwrap(commands[position])
    program.env, program.expect_failure = env, negated
    if stages[run_index].negate:
        program.expect_failure = not program.expect_failure
    head = args[0]
    for redirect in commands[position].redirects:
        (op, *fd), target = redirect
        if op == ">&" and fd == [2] and target == "1":
            program.merge_stderr = True
        elif op == "<" and not fd:
            program.stdin = target
        else:
            raise Unsupported(f"the program's redirection "
                              f"'{quote_redirect(redirect)}'")
    if head.startswith("%run_gpu"):
        if len(args) > 1:
            raise Unsupported(f"%run_gpu with arguments {args[1:]}")
        program.libraries = [lib for lib in head.split(",")[1:] if lib]
        for lib in program.libraries:
            if not lib.startswith("%t"):
                raise Unsupported(f"%run_gpu loads {lib}, which the test "
                                  "does not build")
        if position > 0:
            if program.stdin:
                raise Unsupported("%run_gpu reads both a pipe and a file")
            program.producer = pipeline_text(commands[:position])
        elif program.stdin:
            program.mlir_file, program.stdin = program.stdin, None
        else:
            raise Unsupported("%run_gpu has no input")
        needs = program.libraries + \
            ([program.mlir_file] if program.mlir_file else []) + \
            (temporaries(program.producer) if program.producer else [])
    else:
        if position > 0:
            raise Unsupported("a pipe feeds the program")
        program.executable, program.arguments = head, args[1:]
        needs = [head] + [p for p in temporaries(" ".join(args[1:]))]
        if program.stdin:
            needs.append(program.stdin)
    resolve([n for n in needs if n not in seen], written, program, seen)
    consumer = commands[position + 1:]
    if consumer:
        text = pipeline_text(consumer)
        if temporaries(text):
            raise Unsupported("the check reads files the test writes "
                              f"({', '.join(temporaries(text))})")
        program.consumer = text
    return program


def variants(test_root, test_path):
    """The GPU variants of one test file (path relative to test_root)."""
    path = os.path.join(test_root, test_path)
    lines, requires, unsupported = read_directives(path)
    found = []
    for line in lines:
        try:
            cpu = expand(line.text, CPU_FEATURES)
            one = expand(line.text, GPU_FEATURES)
            two = expand(line.text, GPUS_2_FEATURES)
        except ValueError as error:
            found.append(Variant(test_path, line.number, 1, line.text,
                                 skip=f"lit cannot expand the line: {error}"))
            continue
        if one != cpu and one:
            variant, features = Variant(test_path, line.number, 1, one), \
                GPU_FEATURES
        elif two != cpu and two:
            variant, features = Variant(test_path, line.number, 2, two), \
                GPUS_2_FEATURES
        else:
            continue
        missing = [e for e in requires
                   if not BooleanExpression.evaluate(e, features)]
        excluded = [e for e in unsupported
                    if BooleanExpression.evaluate(e, features)]
        if missing or excluded:
            variant.skip = "the test " + (
                f"REQUIRES {', '.join(missing)}" if missing else
                f"is UNSUPPORTED with {', '.join(excluded)}")
        else:
            try:
                variant.program = plan(lines, variant, features)
            except (Unsupported, ValueError) as error:
                variant.skip = str(error)
        found.append(variant)
    return found


def discover(test_root, directory="Execution", suffixes=(".mlir", ".test")):
    """Every GPU variant under test_root/directory, in path order; Inputs
    folders are not tests (as lit's config excludes them)."""
    found = []
    for folder, subfolders, files in os.walk(os.path.join(test_root,
                                                          directory)):
        subfolders[:] = sorted(d for d in subfolders if d != "Inputs")
        for name in sorted(files):
            if name.endswith(suffixes):
                relative = os.path.relpath(os.path.join(folder, name),
                                           test_root)
                found += variants(test_root, relative)
    return found
