//===- TestMain.cpp - Entry point of the runtime unit tests ---------------===//
//
// Runs the GoogleTest unit tests of the host runtime after fixing the CUDA
// simulator's configuration: lit clears the ETCOPY_CUDA_SIM_* variables, so
// the binary asks for the two simulated devices the multi-device tests need
// (unless the caller chose a count) and drops any inherited fault injection,
// which individual tests enable in fresh processes only, and any inherited
// pool policy.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include <cstdlib>

int main(int argc, char **argv) {
  ::setenv("ETCOPY_CUDA_SIM_DEVICES", "2", /*overwrite=*/0);
  ::unsetenv("ETCOPY_CUDA_SIM_FAIL_ALLOC");
  // The CUDA allocator's pool policy is the default one unless a test says.
  ::unsetenv("ETCOPY_POOL_RELEASE_THRESHOLD");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
