//===- StandaloneFuzzerMain.cpp - Run a fuzz target without libFuzzer -----===//
//
// The main of a fuzz target built without ETCOPY_BUILD_FUZZERS: it runs the
// target once on each file named on the command line (flags are ignored), so
// that saved reproducers and the seed corpus replay in any build and the
// targets are compiled, and kept compiling, by the normal build.
//
//===----------------------------------------------------------------------===//

#include "llvm/FuzzMutate/FuzzerCLI.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

static int noInitialize(int *, char ***) { return 0; }

int main(int argc, char **argv) {
  return llvm::runFuzzerOnInputs(
      argc, argv, LLVMFuzzerTestOneInput,
      LLVMFuzzerInitialize ? LLVMFuzzerInitialize : noInitialize);
}
