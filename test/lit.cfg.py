# lit.cfg.py - lit configuration of the etcopy test suite.
#
# Tools come from the build tree (etcopy-opt, the simulator, the runtime
# tests) and from LLVM 22 (FileCheck, mlir-runner, mlir-translate, clang).
# Features:
#   valgrind      valgrind is installed;
#   cuda-toolkit  the CUDA toolkit (libcudart) was found at configure time;
#   cuda-gpu      a working CUDA device answers at test time (the real
#                 libcudart gives device 0 a context and an allocation);
#   cuda-gpus-2   two devices answer (cuda:0 and cuda:1): tests that use a
#                 second device need it;
#   sanitizers    etcopy was built with ETCOPY_ENABLE_SANITIZERS (ASan and
#                 UBSan): its programs run with the ASAN_OPTIONS the build
#                 chose, uninstrumented programs that load an instrumented
#                 library (mlir-runner, mlir-opt) preload the ASan runtime,
#                 and C programs built by tests are instrumented too;
#   libfuzzer     the fuzz targets are libFuzzer binaries
#                 (ETCOPY_BUILD_FUZZERS);
#   tsan-simulator  the simulator was also built with ThreadSanitizer
#                 (%etcopy_cuda_sim_tsan, which check-etcopy builds where
#                 the compiler can; C programs linking it are built with
#                 %clang -fsanitize=thread, never %cc).
# Set ETCOPY_VERIFY_ROUNDTRIP=1 to run every etcopy-opt with
# --verify-roundtrip.

import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "etcopy"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.etcopy_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# The simulator's configuration (devices, failures, costs, ...) comes from
# the environment: tests set what they need, nothing leaks in from outside.
for var in [v for v in config.environment if v.startswith("ETCOPY_CUDA_SIM_")]:
    config.environment.pop(var, None)

# Sanitized builds: every program sees the sanitizer options; LLVM's tools,
# uninstrumented, get the ASan runtime preloaded (with leak checking off:
# the leaks of LLVM's JIT and of stock mlir-opt are not etcopy's) when they
# may load an etcopy library; %cc compiles test programs with the flags
# etcopy was built with (%sanitizer_flags gives them to other builds).
preload = ""
if config.etcopy_sanitizers:
    config.available_features.add("sanitizers")
    config.environment["ASAN_OPTIONS"] = config.asan_options
    config.environment["UBSAN_OPTIONS"] = config.ubsan_options
    preload = "env LD_PRELOAD={} ASAN_OPTIONS={}:detect_leaks=0 ".format(
        config.sanitizer_runtime, config.asan_options)
if config.etcopy_fuzzers:
    config.available_features.add("libfuzzer")
if config.tsan_cuda_sim and os.path.exists(config.tsan_cuda_sim):
    config.available_features.add("tsan-simulator")
# Python loading an instrumented library (ctypes) needs the same preload:
# `env %sanitizer_preload_env %python ...` (nothing without sanitizers).
sanitizer_preload_env = ""
if config.etcopy_sanitizers:
    sanitizer_preload_env = "LD_PRELOAD={} ASAN_OPTIONS={}:detect_leaks=0" \
        .format(config.sanitizer_runtime, config.asan_options)

etcopy_opt_args = []
if os.environ.get("ETCOPY_VERIFY_ROUNDTRIP", "0") not in ("", "0"):
    etcopy_opt_args.append("--verify-roundtrip")

tool_dirs = [config.etcopy_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("etcopy-opt", extra_args=etcopy_opt_args, unresolved="fatal"),
    ToolSubst("etcopy-pipeline-fuzzer", unresolved="fatal"),
    ToolSubst("etcopy-runtime-fuzzer", unresolved="fatal"),
    ToolSubst("mlir-opt", unresolved="fatal",
              command=preload + os.path.join(config.llvm_tools_dir,
                                             "mlir-opt")),
    ToolSubst("mlir-runner", unresolved="fatal",
              command=preload + os.path.join(config.llvm_tools_dir,
                                             "mlir-runner")),
    ToolSubst("mlir-translate", unresolved="fatal"),
    ToolSubst("mlir-tblgen", unresolved="fatal"),
    ToolSubst("%cc", command=config.test_cc, unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

lib = config.etcopy_lib_dir
sim = os.path.join(lib, "libetcopy_cuda_sim.so")
runner_utils = os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so")
c_runner_utils = os.path.join(config.llvm_lib_dir,
                              "libmlir_c_runner_utils.so")
config.substitutions.extend([
    ("%etcopy_src_root", config.etcopy_src_root),
    ("%etcopy_obj_root", config.etcopy_obj_root),
    ("%mlir_cmake_dir", config.mlir_cmake_dir),
    ("%cxx", os.path.join(config.llvm_tools_dir, "clang++")),
    ("%clang", os.path.join(config.llvm_tools_dir, "clang")),
    ("%sanitizer_flags", config.sanitizer_flags),
    ("%sanitizer_preload_env", sanitizer_preload_env),
    ("%etcopy_lib_dir", lib),
    ("%etcopy_tools", config.etcopy_tools_dir),
    ("%etcopy_cuda_sim_tsan", config.tsan_cuda_sim),
    ("%etcopy_cuda_sim", sim),
    ("%cuda_sim_include",
     os.path.join(config.etcopy_src_root, "lib", "Runtime", "CudaSim")),
    ("%mlir_include", config.mlir_include_dir),
    ("%llvm_lib_dir", config.llvm_lib_dir),
    ("%mlir_runner_utils", runner_utils),
    ("%mlir_c_runner_utils", c_runner_utils),
    ("%cudart_dir", os.path.dirname(config.cudart_library)),
    ("%cudart", config.cudart_library),
    ("%etcopy_runtime_tests",
     os.path.join(config.etcopy_tools_dir, "EtCopyRuntimeTests")),
    ("%python", sys.executable),
])

# Execution: mlir-runner JIT-runs @main of lowered code against the
# simulator, the host runtime libraries only, or the real CUDA runtime.
runner = preload + os.path.join(config.llvm_tools_dir, "mlir-runner")
run_main = runner + " -e main --entry-point-result=void --shared-libs="
gpu_libs = ",".join([config.cudart_library, runner_utils, c_runner_utils])
config.substitutions.extend([
    ("%run_sim", run_main + ",".join([sim, runner_utils, c_runner_utils])),
    ("%run_host", run_main + ",".join([runner_utils, c_runner_utils])),
    ("%run_gpu", run_main + gpu_libs),
])

# valgrind's memcheck runs lowered code in tests that check it reads no
# uninitialised memory (utils/setup.sh installs it). Not in the sanitized
# build: its libraries are instrumented with ASan, which checks the same
# accesses and does not run under valgrind (valgrind 3.19 even fails to read
# their debug information).
if shutil.which("valgrind") and not config.etcopy_sanitizers:
    config.available_features.add("valgrind")

if config.cuda_toolkit_found and os.path.exists(config.cudart_library):
    config.available_features.add("cuda-toolkit")


def answering_cuda_devices(cudart):
    """How many CUDA devices, from cuda:0, take a context and an allocation
    from the real runtime: utils/cuda-device-visible.py, in a process of its
    own (CUDA contexts must not live in lit's process, which forks)."""
    probe = os.path.join(config.etcopy_src_root, "utils",
                         "cuda-device-visible.py")
    try:
        result = subprocess.run([sys.executable, probe, "--count", cudart],
                                capture_output=True, text=True, timeout=120)
        return int(result.stdout.strip() or 0)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


if "cuda-toolkit" in config.available_features:
    devices = answering_cuda_devices(config.cudart_library)
    if devices >= 1:
        config.available_features.add("cuda-gpu")
    if devices >= 2:
        config.available_features.add("cuda-gpus-2")
