//===- TestSupport.h - Helpers shared by the runtime's unit tests -*- C++ -*-===//
//
// What several of the runtime's unit tests need: EXPECT_CONTAINS for
// messages, and runAndExit, the statement of death tests that need a process
// of their own (a fresh CUDA simulator, whose statistics and exit-time checks
// run when the process exits, or whose pools no other test has touched).
//
//===----------------------------------------------------------------------===//

#ifndef UNITTESTS_RUNTIME_TESTSUPPORT_H
#define UNITTESTS_RUNTIME_TESTSUPPORT_H

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <string>

/// Expects `text` to contain `part`.
#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "'" << (text) << "' does not contain '" << (part) << "'"

namespace etcopy::runtime::testsupport {

/// Runs `body` (returning a failure description, empty on success) and exits
/// the process: 0 on success, 3 after printing the failure. A plain exit
/// runs the simulator's exit-time checks and statistics.
template <typename Body> [[noreturn]] void runAndExit(Body body) {
  std::string failure = body();
  if (!failure.empty()) {
    std::fprintf(stderr, "child failure: %s\n", failure.c_str());
    std::fflush(stderr);
    std::exit(3);
  }
  std::exit(0);
}

} // namespace etcopy::runtime::testsupport

#endif // UNITTESTS_RUNTIME_TESTSUPPORT_H
