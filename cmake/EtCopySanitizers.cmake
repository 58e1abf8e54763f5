#===- EtCopySanitizers.cmake - Sanitizer and fuzzer build options ---------===#
#
# Two options, for their own build directories (utils/sanitize.sh and
# utils/fuzz.sh make them):
#
#   ETCOPY_ENABLE_SANITIZERS  compile every etcopy target with AddressSanitizer
#                             and UndefinedBehaviorSanitizer; any report
#                             aborts the program.
#   ETCOPY_BUILD_FUZZERS      also build the fuzz targets of tools/etcopy-fuzz
#                             with libFuzzer, and etcopy's code with coverage
#                             instrumentation for it (clang only; implies
#                             ETCOPY_ENABLE_SANITIZERS).
#
# Included before HandleLLVMOptions, whose LLVM_USE_SANITIZER handling does
# the compiling: it adds -fsanitize=address, frame pointers and line tables,
# -fsanitize=fuzzer-no-link for LLVM_USE_SANITIZE_COVERAGE, and drops
# -Wl,-z,defs (sanitized shared libraries leave the runtime's symbols to the
# executable). Out of tree LLVM_UBSAN_FLAGS is empty, so it is set here to
# upstream LLVM's own choice: vptr and function checks off, because libMLIR.so
# and libLLVM.so are not instrumented (type info and function signatures
# across that boundary are not checkable).
#
# LLVM itself, libMLIR.so, mlir-runner and stock mlir-opt stay uninstrumented.
# What that means at run time (ASAN_OPTIONS, preloading the runtime) is set in
# ETCOPY_SANITIZER_ENV below, used by lit and the scripts.
#
#===----------------------------------------------------------------------===#

option(ETCOPY_ENABLE_SANITIZERS
  "Build etcopy with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(ETCOPY_BUILD_FUZZERS
  "Build the libFuzzer targets (clang only; implies ETCOPY_ENABLE_SANITIZERS)"
  OFF)

if(ETCOPY_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ETCOPY_BUILD_FUZZERS needs clang (libFuzzer), got "
                        "${CMAKE_CXX_COMPILER_ID}: configure with "
                        "-DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++")
  endif()
  set(ETCOPY_ENABLE_SANITIZERS ON CACHE BOOL
      "Build etcopy with AddressSanitizer and UndefinedBehaviorSanitizer"
      FORCE)
  set(LLVM_USE_SANITIZE_COVERAGE ON)
endif()

set(ETCOPY_SANITIZER_RUNTIME "")
if(ETCOPY_ENABLE_SANITIZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ETCOPY_ENABLE_SANITIZERS needs clang, got "
                        "${CMAKE_CXX_COMPILER_ID}: configure with "
                        "-DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++")
  endif()
  set(LLVM_USE_SANITIZER "Address;Undefined")
  set(LLVM_UBSAN_FLAGS
      "-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all")
  # What C and C++ code linked with etcopy's instrumented libraries compiles
  # with: the tests' programs, and projects built against the install.
  set(ETCOPY_SANITIZER_FLAGS "-fsanitize=address ${LLVM_UBSAN_FLAGS}")

  # The shared ASan runtime, preloaded into uninstrumented programs that
  # load an instrumented library (mlir-runner, stock mlir-opt).
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
    OUTPUT_VARIABLE ETCOPY_SANITIZER_RUNTIME
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${ETCOPY_SANITIZER_RUNTIME}" OR
     NOT EXISTS "${ETCOPY_SANITIZER_RUNTIME}")
    message(FATAL_ERROR "ETCOPY_ENABLE_SANITIZERS: ${CMAKE_CXX_COMPILER} has "
                        "no shared ASan runtime (install libclang-rt-22-dev)")
  endif()
  message(STATUS "Sanitizers: address, undefined (runtime "
                 "${ETCOPY_SANITIZER_RUNTIME})")
endif()

# ASAN_OPTIONS every sanitized etcopy program runs with:
#   allow_user_poisoning=0  LLVM's BumpPtrAllocator poisons memory from inline
#                           code compiled into etcopy and unpoisons it in the
#                           uninstrumented libMLIR.so: without this, ASan
#                           reports a false use-after-poison.
#   detect_leaks=1          etcopy's own programs are leak-checked; set to 0
#                           by lit for uninstrumented programs that only
#                           preload the runtime (LLVM's JIT keeps memory).
#   abort_on_error=1        a report ends the program with SIGABRT, as a
#                           crash: `not` (an expected error exit) does not
#                           take it for a pass, and a `not --crash` test of a
#                           real segfault still sees a crash once ASan has
#                           reported it.
set(ETCOPY_ASAN_OPTIONS "allow_user_poisoning=0:detect_leaks=1:abort_on_error=1")
set(ETCOPY_UBSAN_OPTIONS "print_stacktrace=1:abort_on_error=1")
