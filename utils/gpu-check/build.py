#!/usr/bin/env python3
# ===- build.py - Build the GPU check bundle ------------------------------=== #
#
# Builds, on the CPU machine, one folder that holds everything the GPU
# checks need as ready executables (docs/GPUChecks.md):
#
#   bin/      the GPU variant of every execution test (tests.py), the
#             round-trip sweep (sweep.py), the transfer benchmarks
#             (benchmarks.py) and the runtime's unit tests, each linked
#             ahead of time (etcopy-opt, mlir-translate, clang-22) against
#             libcudart.so.13 and found libraries through $ORIGIN/../lib;
#   lib/      libcudart.so.13 (copied from the CUDA toolkit),
#             libetcopy_runner_utils.so (MLIR's memref printers and
#             memrefCopy from the installed headers, support/RunnerUtils.cpp),
#             libEtCopyRuntime.so and the simulator the unit tests use;
#   sim/      the simulator under the name libcudart.so.13: run.sh
#             --simulator puts it first on LD_LIBRARY_PATH, so the same
#             executables run against it;
#   expected/ the tests' sources (their CHECK lines) and the sweep's
#             expected canvases, printed by the host reference lowering;
#   run.sh, run.py, tools/cuda-device-visible.py, manifest.json.
#
# The programs link against a stub of libcudart.so.13 made from the real
# library's exported names, without its symbol versions: the real library
# satisfies the unversioned references, and the simulator (which has no
# version definitions) stands in without the loader's warning.
#
# Every executable and library is checked with ldd to need only libc,
# libm, libgcc_s, libstdc++, libdl, libpthread, librt, libcudart and the
# bundle's own libraries, and the folder to stay under the size that
# travels to a lent GPU machine.
#
#   build.py [--build-dir build] [--output build/gpu-check] [-j N]
#
# ===----------------------------------------------------------------------=== #
"""Builds the GPU check bundle."""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import benchmarks  # noqa: E402
import sweep  # noqa: E402
import tests  # noqa: E402

LLVM_BIN = "/usr/lib/llvm-22/bin"
LLVM_INCLUDE = "/usr/lib/llvm-22/include"
BUILTINS = ("/usr/lib/llvm-22/lib/clang/22/lib/linux/"
            "libclang_rt.builtins-x86_64.a")
CUDART = "libcudart.so.13"
RUNNER_UTILS = "libetcopy_runner_utils.so"
# What a bundled ELF file may load, besides the bundle's own libraries.
SYSTEM_LIBRARIES = re.compile(
    r"^(linux-vdso\.so\.1|/?.*ld-linux-x86-64\.so\.2|"
    r"lib(c|m|dl|pthread|rt|gcc_s)\.so\.[0-9]+|libstdc\+\+\.so\.6)$")
SIZE_LIMIT = 48 << 20
MAIN_SYMBOL = "etcopy_gpu_check_main"

TEST_TIMEOUT, SWEEP_TIMEOUT, UNITTEST_TIMEOUT = 60, 30, 180


class BuildError(Exception):
    pass


def run(command, what, **kwargs):
    process = subprocess.run(command, capture_output=True, text=True,
                             **kwargs)
    if process.returncode != 0:
        shown = command if isinstance(command, str) else shlex.join(command)
        raise BuildError(f"{what} failed (exit status "
                         f"{process.returncode}):\n$ {shown}\n"
                         f"{process.stdout[-2000:]}{process.stderr[-4000:]}")
    return process.stdout


def log(message):
    print(f"gpu-check build: {message}", flush=True)


class Bundle:
    def __init__(self, args):
        self.build = os.path.abspath(args.build_dir)
        self.out = os.path.abspath(args.output)
        self.work = os.path.join(self.build, "gpu-check-work")
        self.jobs = args.jobs
        self.cuda_home = args.cuda_home
        self.manifest = []
        self.etcopy_opt = os.path.join(self.build, "bin", "etcopy-opt")
        self.cc = os.path.join(LLVM_BIN, "clang")
        self.stub = os.path.join(self.work, "stub", CUDART)
        self.main_object = os.path.join(self.work, "main.o")
        self.sim = os.path.join(self.build, "lib", "libetcopy_cuda_sim.so")
        self.env = dict(os.environ,
                        PATH=os.pathsep.join([os.path.join(self.build, "bin"),
                                              LLVM_BIN,
                                              os.environ.get("PATH", "")]),
                        # `-Wl,-rpath,$ORIGIN/..` in a test's RUN line stays
                        # literal when bash expands it.
                        ORIGIN="$ORIGIN")
        for key in [k for k in self.env if k.startswith("ETCOPY_CUDA_SIM_")]:
            del self.env[key]

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    # ===------------------------------------------------------------------=== #
    # Libraries
    # ===------------------------------------------------------------------=== #

    def prepare(self):
        for tool in (self.etcopy_opt, self.sim):
            if not os.path.exists(tool):
                raise BuildError(f"{tool} is missing: build etcopy first "
                                 "(utils/setup.sh)")
        cudart = os.path.join(self.cuda_home, "lib64", CUDART)
        if not os.path.exists(cudart):
            raise BuildError(f"no {cudart}: the bundle needs the CUDA 13 "
                             "runtime (set --cuda-home)")
        shutil.rmtree(self.out, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)
        for folder in ("bin", "lib", "sim", "tools", "expected"):
            os.makedirs(self.path(folder))
        os.makedirs(os.path.dirname(self.stub))
        shutil.copy2(cudart, self.path("lib", CUDART))
        shutil.copy2(self.sim, self.path("sim", CUDART))
        # The stub: every function libcudart exports, unversioned.
        names = run([os.path.join(LLVM_BIN, "llvm-nm"), "-D",
                     "--defined-only", "--format=just-symbols", cudart],
                    "listing libcudart's symbols").split()
        stub_c = os.path.join(self.work, "stub", "cudart-stub.c")
        with open(stub_c, "w") as f:
            f.write("/* Link-time stand-in for libcudart.so.13 (generated by "
                    "utils/gpu-check/build.py). */\n")
            for name in sorted(set(n.split("@")[0] for n in names)):
                if re.match(r"^[A-Za-z_]\w*$", name):
                    f.write(f"void {name}(void) {{}}\n")
        run([self.cc, "-shared", "-fPIC", "-w", stub_c, "-o", self.stub,
             f"-Wl,-soname,{CUDART}"], "building the libcudart stub")
        run([os.path.join(LLVM_BIN, "clang++"), "-std=c++17", "-O2", "-fPIC",
             "-shared", "-Wall", f"-I{LLVM_INCLUDE}",
             os.path.join(HERE, "support", "RunnerUtils.cpp"), "-o",
             self.path("lib", RUNNER_UTILS), f"-Wl,-soname,{RUNNER_UTILS}"],
            "building the runner utilities")
        main_c = os.path.join(self.work, "main.c")
        with open(main_c, "w") as f:
            f.write("/* mlir-runner's `-e main --entry-point-result=void`, "
                    "ahead of time: the lowered @main is renamed to\n   "
                    f"{MAIN_SYMBOL} (generated by utils/gpu-check/build.py)."
                    f" */\nvoid {MAIN_SYMBOL}(void);\n"
                    f"int main(void) {{\n  {MAIN_SYMBOL}();\n  return 0;\n}}\n")
        run([self.cc, "-O2", "-c", main_c, "-o", self.main_object],
            "compiling the entry")
        for name in ("run.sh", "run.py"):
            shutil.copy2(os.path.join(HERE, name), self.path(name))
        shutil.copy2(os.path.join(ROOT, "utils", "cuda-device-visible.py"),
                     self.path("tools", "cuda-device-visible.py"))

    def link(self, name, objects, sources=(), libraries=(), defines=(),
             includes=(), folder="bin"):
        output = self.path(folder, name)
        command = [self.cc, "-O2", "-Wno-override-module", *objects,
                   *[f"-D{d}" for d in defines],
                   *[f"-I{i}" for i in includes], *sources, "-o", output,
                   *libraries, self.stub, self.path("lib", RUNNER_UTILS)]
        if os.path.exists(BUILTINS):
            command.append(BUILTINS)
        command += ["-lm", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN/../lib"]
        run(command, f"linking {name}")
        return output

    def compile_lowered(self, mlir, stem, rename_main):
        """Lowered MLIR (a file) to an object file."""
        ll, obj = stem + ".ll", stem + ".o"
        run([os.path.join(LLVM_BIN, "mlir-translate"), "--mlir-to-llvmir",
             mlir, "-o", ll], f"translating {mlir}")
        run([self.cc, "-O2", "-c", "-Wno-override-module", ll, "-o", obj],
            f"compiling {ll}")
        if rename_main:
            run([os.path.join(LLVM_BIN, "llvm-objcopy"), "--redefine-sym",
                 f"main={MAIN_SYMBOL}", obj], f"renaming main in {obj}")
        return obj

    def lower(self, source, options, output):
        pipeline = "--etcopy-to-cuda" + (f"={options}" if options else "")
        run([self.etcopy_opt, source, pipeline, "-o", output],
            f"lowering {source} ({pipeline})")

    # ===------------------------------------------------------------------=== #
    # Execution tests
    # ===------------------------------------------------------------------=== #

    def substitute(self, text, variant, tmp):
        """lit's substitutions for a build-time line, for the GPU."""
        source = os.path.join(ROOT, "test", variant.test)
        table = {
            "%s": source, "%S": os.path.dirname(source),
            "%p": os.path.dirname(source), "%t": tmp,
            "%cc": self.cc, "%cxx": os.path.join(LLVM_BIN, "clang++"),
            "%python": sys.executable,
            "%cudart": self.stub, "%cudart_dir": "$ORIGIN/../lib",
            "%llvm_lib_dir": "$ORIGIN/../lib",
            "%mlir_runner_utils": self.path("lib", RUNNER_UTILS),
            "%mlir_c_runner_utils": self.path("lib", RUNNER_UTILS),
            "%cuda_sim_include": os.path.join(ROOT, "lib", "Runtime",
                                              "CudaSim"),
            "%mlir_include": LLVM_INCLUDE,
            "%etcopy_src_root": ROOT, "%etcopy_obj_root": self.build,
            "%etcopy_tools": os.path.join(self.build, "bin"),
        }

        def replace(match):
            name = match.group(0)
            if name not in table:
                raise tests.Unsupported(f"the bundle has no GPU substitute "
                                        f"for {name}")
            return table[name]

        return re.sub(r"%[A-Za-z_]+", replace, text)

    def shell(self, text, what, cwd, stdout=None):
        process = subprocess.run(["bash", "-o", "pipefail", "-c", text],
                                 cwd=cwd, env=self.env, capture_output=True,
                                 text=True)
        if process.returncode != 0:
            raise BuildError(f"{what} failed (exit status "
                             f"{process.returncode}):\n$ {text}\n"
                             f"{process.stderr[-4000:]}")
        if stdout:
            with open(stdout, "w") as f:
                f.write(process.stdout)

    def build_variant(self, variant):
        program = variant.program
        folder = os.path.join(self.work, "tests", variant.name)
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, "t")
        for line in program.build_lines:
            self.shell(self.substitute(line.text, variant, tmp),
                       f"{variant.id}: RUN line {line.number}", folder)
        sub = lambda text: self.substitute(text, variant, tmp)  # noqa: E731
        name = f"test-{variant.name}"
        if program.executable:
            shutil.copy2(sub(program.executable), self.path("bin", name))
        else:
            mlir = os.path.join(folder, "lowered.mlir")
            if program.mlir_file:
                shutil.copy2(sub(program.mlir_file), mlir)
            else:
                self.shell(sub(program.producer),
                           f"{variant.id}: the lowering", folder, mlir)
            obj = self.compile_lowered(mlir, os.path.join(folder, "lowered"),
                                       rename_main=True)
            # By name (-l:), so that the program needs the file name, not
            # the path: the test's libraries have no soname.
            libraries = [f"-L{self.path('lib')}"]
            for index, library in enumerate(program.libraries):
                bundled = f"lib{variant.name}-{index}.so"
                shutil.copy2(sub(library), self.path("lib", bundled))
                libraries.append(f"-l:{bundled}")
            self.link(name, [obj, self.main_object], libraries=libraries)
        # The files the check reads: the test, and any %S path it names.
        consumer = program.consumer
        if consumer:
            source_dir = os.path.dirname(variant.test)
            consumer = consumer.replace(
                "%s", os.path.join("expected", "tests", variant.test))
            consumer = re.sub(r"%[Sp](?![A-Za-z_])",
                              os.path.join("expected", "tests", source_dir),
                              consumer)
            left = re.findall(r"%[A-Za-z_]+", consumer)
            if left:
                raise tests.Unsupported(f"the check uses {left[0]}, which "
                                        "the CPU machine's checker lacks")
            for path in re.findall(r"expected/tests/[\w./\-]+", consumer):
                relative = os.path.relpath(path, "expected/tests")
                source = os.path.join(ROOT, "test", relative)
                if os.path.isfile(source):
                    os.makedirs(os.path.dirname(self.path(path)),
                                exist_ok=True)
                    shutil.copy2(source, self.path(path))
        stdin = None
        if program.stdin:
            stdin = os.path.join("expected", "stdin", name)
            os.makedirs(self.path("expected", "stdin"), exist_ok=True)
            shutil.copy2(sub(program.stdin), self.path(stdin))
        return {
            "id": f"test:{variant.id}", "kind": "test",
            "description": variant.command,
            "argv": [f"bin/{name}"] + [sub(a) for a in program.arguments],
            "env": program.env, "stdin": stdin,
            "merge_stderr": program.merge_stderr,
            "expect_failure": program.expect_failure,
            "devices": variant.devices, "timeout": TEST_TIMEOUT,
            "sanitize": True, "consumer": consumer,
        }

    def execution_tests(self):
        variants = tests.discover(os.path.join(ROOT, "test"))
        planned = [v for v in variants if v.program]
        items = {}
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futures = {pool.submit(self.build_variant, v): v for v in planned}
            for future in concurrent.futures.as_completed(futures):
                variant = futures[future]
                try:
                    items[variant.id] = future.result()
                except tests.Unsupported as error:
                    variant.program, variant.skip = None, str(error)
        planned = [v for v in variants if v.program]
        for variant in variants:
            if variant.program:
                self.manifest.append(items[variant.id])
            else:
                self.manifest.append({
                    "id": f"test:{variant.id}", "kind": "test",
                    "description": variant.command,
                    "devices": variant.devices, "skip": variant.skip})
        log(f"{len(planned)} GPU variants of execution tests built, "
            f"{len(variants) - len(planned)} skipped")

    # ===------------------------------------------------------------------=== #
    # The sweep
    # ===------------------------------------------------------------------=== #

    def round_trips(self, seed, random_cases):
        folder = os.path.join(self.work, "sweep")
        os.makedirs(folder)
        cases = sweep.generate(seed, random_cases)
        source = os.path.join(folder, "sweep.mlir")
        with open(source, "w") as f:
            f.write(sweep.module(cases))
        main_c = os.path.join(folder, "sweep-main.c")
        with open(main_c, "w") as f:
            f.write(sweep.c_main(cases))
        self.lower(source, "", os.path.join(folder, "cuda.mlir"))
        obj = self.compile_lowered(os.path.join(folder, "cuda.mlir"),
                                   os.path.join(folder, "cuda"), False)
        self.link("sweep", [obj], sources=[main_c])
        # The host reference: the same module, --etcopy-to-host.
        run([self.etcopy_opt, source, "--etcopy-to-host", "-o",
             os.path.join(folder, "host.mlir")], "lowering the sweep to host")
        host_obj = self.compile_lowered(os.path.join(folder, "host.mlir"),
                                        os.path.join(folder, "host"), False)
        reference = os.path.join(folder, "sweep-host")
        command = [self.cc, "-O2", host_obj, main_c, "-o", reference,
                   self.path("lib", RUNNER_UTILS), "-lm",
                   f"-Wl,-rpath,{self.path('lib')}"]
        if os.path.exists(BUILTINS):
            command.insert(-2, BUILTINS)
        run(command, "linking the sweep's host reference")
        os.makedirs(self.path("expected", "sweep"))
        for case in cases:
            output = run([reference, str(case.id)],
                         f"the host reference of case {case.id}")
            with open(self.path("expected", "sweep", f"{case.id}.txt"),
                      "w") as f:
                f.write(normalize(output))
            self.manifest.append({
                "id": f"sweep:{case.id}", "kind": "sweep",
                "description": f"{case.name}: {case.describe()}",
                "argv": ["bin/sweep", str(case.id)], "env": {},
                "stdin": None, "merge_stderr": False,
                "expect_failure": False, "devices": 1,
                "timeout": SWEEP_TIMEOUT,
                "sanitize": not case.name.startswith("random"),
                "expected": f"expected/sweep/{case.id}.txt"})
        log(f"{len(cases)} round trips built (seed {seed}), expected data "
            "from the host reference")

    # ===------------------------------------------------------------------=== #
    # Benchmarks and unit tests
    # ===------------------------------------------------------------------=== #

    def build_benchmark(self, bench):
        folder = os.path.join(self.work, "bench", bench.name)
        os.makedirs(folder)
        source = os.path.join(folder, "program.mlir")
        harness = os.path.join(folder, "harness.c")
        with open(source, "w") as f:
            f.write(bench.mlir)
        with open(harness, "w") as f:
            f.write(bench.c)
        self.lower(source, bench.options, os.path.join(folder, "lowered.mlir"))
        obj = self.compile_lowered(os.path.join(folder, "lowered.mlir"),
                                   os.path.join(folder, "lowered"), False)
        name = f"bench-{bench.name}"
        self.link(name, [obj], sources=[harness], defines=bench.defines,
                  includes=[os.path.join(ROOT, "lib", "Runtime", "CudaSim"),
                            os.path.join(ROOT, "test", "Execution",
                                         "Inputs")])
        return {
            "id": f"bench:{bench.name}", "kind": "bench",
            "description": bench.description + (
                f" (--etcopy-to-cuda={bench.options})" if bench.options
                else ""),
            "argv": [f"bin/{name}"], "env": {}, "stdin": None,
            "merge_stderr": False, "expect_failure": False,
            "devices": bench.devices, "timeout": bench.timeout,
            "sanitize": False}

    def transfer_benchmarks(self):
        programs = benchmarks.programs()
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            self.manifest += list(pool.map(self.build_benchmark, programs))
        log(f"{len(programs)} transfer benchmark programs built")

    def unit_tests(self):
        binary = os.path.join(self.build, "bin", "EtCopyRuntimeTests")
        if not os.path.exists(binary):
            self.manifest.append({
                "id": "unittests:EtCopyRuntimeTests", "kind": "gtest",
                "devices": 1, "skip": "the build has no EtCopyRuntimeTests "
                "(GoogleTest was not found)"})
            return
        shutil.copy2(binary, self.path("bin", "EtCopyRuntimeTests"))
        for library in ("libEtCopyRuntime.so", "libetcopy_cuda_sim.so"):
            shutil.copy2(os.path.join(self.build, "lib", library),
                         self.path("lib", library))
        # CMake's own RPATH editing: the copies find their libraries (and
        # the runtime, when it loads libcudart.so.13 by name) in lib/.
        script = os.path.join(self.work, "set-rpath.cmake")
        with open(script, "w") as f:
            f.write('file(RPATH_SET FILE "${FILE}" NEW_RPATH "${RPATH}")\n')
        for name, rpath in (("bin/EtCopyRuntimeTests", "$ORIGIN/../lib"),
                            ("lib/libEtCopyRuntime.so", "$ORIGIN"),
                            ("lib/libetcopy_cuda_sim.so", "$ORIGIN")):
            run(["cmake", f"-DFILE={self.path(name)}", f"-DRPATH={rpath}",
                 "-P", script], f"setting the RPATH of {name}")
        self.manifest.append({
            "id": "unittests:EtCopyRuntimeTests", "kind": "gtest",
            "description": "the host runtime's GoogleTest unit tests "
            "(RealCudaTest runs where the CUDA runtime answers)",
            "argv": ["bin/EtCopyRuntimeTests", "--gtest_brief=1"], "env": {},
            "stdin": None, "merge_stderr": True, "expect_failure": False,
            "devices": 1, "timeout": UNITTEST_TIMEOUT, "sanitize": False})
        log("runtime unit tests copied")

    # ===------------------------------------------------------------------=== #
    # Checks of the bundle itself
    # ===------------------------------------------------------------------=== #

    def check_dependencies(self):
        """Every ELF file needs only the system's C/C++ runtime, libcudart
        and the bundle's own libraries (never LLVM or MLIR)."""
        problems, checked = [], 0
        own = set(os.listdir(self.path("lib")))
        for folder in ("bin", "lib", "sim"):
            for name in sorted(os.listdir(self.path(folder))):
                path = self.path(folder, name)
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                checked += 1
                needed = run([os.path.join(LLVM_BIN, "llvm-readelf"),
                              "--needed-libs", path], f"reading {path}")
                for library in re.findall(r"^\s+(\S+\.so\S*)\s*$", needed,
                                          re.M):
                    if library in own or library == CUDART or \
                            SYSTEM_LIBRARIES.match(library):
                        continue
                    problems.append(f"{folder}/{name} needs {library}")
                if folder != "bin":
                    continue
                # Where the loader finds each library a program loads.
                resolved = run(["ldd", path], f"ldd {path}")
                for line in resolved.splitlines():
                    match = re.match(r"\s*(\S+) => (.*) \(0x", line)
                    if "not found" in line:
                        problems.append(f"{folder}/{name}: {line.strip()}")
                    elif match and not match.group(2).startswith(self.out) \
                            and not SYSTEM_LIBRARIES.match(match.group(1)):
                        problems.append(f"{folder}/{name} loads "
                                        f"{match.group(1)} from "
                                        f"{match.group(2)}, outside the "
                                        "bundle")
                    if re.search(r"lib(LLVM|MLIR|mlir)", line):
                        problems.append(f"{folder}/{name}: {line.strip()}")
        if problems:
            raise BuildError("bundled files need libraries the GPU machine "
                             "does not have:\n  " + "\n  ".join(problems))
        return checked

    def finish(self, started):
        with open(self.path("manifest.json"), "w") as f:
            json.dump({"created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                time.gmtime()),
                       "commit": git_describe(), "items": self.manifest},
                      f, indent=1)
        checked = self.check_dependencies()
        size = sum(os.path.getsize(os.path.join(folder, name))
                   for folder, _, names in os.walk(self.out)
                   for name in names)
        if size > SIZE_LIMIT:
            raise BuildError(f"the bundle holds {size >> 20} MiB, more than "
                             f"{SIZE_LIMIT >> 20} MiB")
        counts = {}
        for item in self.manifest:
            key = item["kind"] + (" (skipped)" if "skip" in item else "")
            counts[key] = counts.get(key, 0) + 1
        log(f"{checked} ELF files need no LLVM library (ldd)")
        log(f"{self.out}: {size / (1 << 20):.1f} MiB, " +
            ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) +
            f" ({time.time() - started:.0f}s)")


def normalize(text):
    """Program output as the checker compares it: no addresses."""
    return re.sub(r"base@ = 0x[0-9a-f]+", "base@ = <address>", text)


def git_describe():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always",
                               "--dirty"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                        help="etcopy's build directory (default: build)")
    parser.add_argument("--output", help="the bundle folder (default: "
                        "BUILD_DIR/gpu-check)")
    parser.add_argument("--cuda-home", default=os.environ.get(
        "CUDA_HOME", "/usr/local/cuda"))
    parser.add_argument("--seed", type=int, default=25,
                        help="seed of the random round trips (default: 25)")
    parser.add_argument("--random", type=int, default=120,
                        help="random round trips (default: 120)")
    parser.add_argument("-j", "--jobs", type=int,
                        default=max(1, os.cpu_count() or 1))
    args = parser.parse_args()
    args.output = args.output or os.path.join(args.build_dir, "gpu-check")
    started = time.time()
    bundle = Bundle(args)
    try:
        bundle.prepare()
        bundle.execution_tests()
        bundle.round_trips(args.seed, args.random)
        bundle.transfer_benchmarks()
        bundle.unit_tests()
        bundle.finish(started)
    except BuildError as error:
        print(f"gpu-check build: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
