//===- PassOptions.h - Option parsing with errors that help ---*- C++ -*-===//
//
// How etcopy's passes and pipelines read their textual options
// (`etcopy-to-cuda{plan-memory=false arena-ownership=caller}`): MLIR's
// syntax, checked first for the mistakes its own parser reports badly. An
// unknown name is reported with the nearest valid name and the list of
// valid ones (MLIR: "no such option"); a comma between two options is
// reported as such (MLIR reads it as part of the first value), and so is an
// empty value (`async=`, which MLIR reads as true); a bad value
// is reported to the caller's stream, not to stderr, by the parsers of
// etcopy's option types. Every etcopy pass derives from EtCopyOperationPass
// (through EtCopyPass in the .td files), which routes its options through
// this; the pipelines' options parse with parseOptions (Pipelines.h). Pass
// options declared in ODS as booleans or integers keep llvm::cl's parsers,
// which report a bad value on stderr themselves.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_SUPPORT_PASSOPTIONS_H
#define ETCOPY_SUPPORT_PASSOPTIONS_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace mlir::etcopy {

//===----------------------------------------------------------------------===//
// Checking option text
//===----------------------------------------------------------------------===//

/// One option of a pass or pipeline, as the checks see it.
struct OptionSpelling {
  std::string name;
  /// Whether `name` alone, without `=value`, is an error (integers, enums).
  bool needsValue = false;
};

/// Checks the names in `text`, the options of the pass or pipeline `owner`,
/// against `options` before MLIR parses their values. Reports to
/// `errorStream`, in one line, and fails on: an unknown name (with the
/// nearest valid name, if one is near, and the list of valid names), a
/// comma between options (MLIR separates options with spaces and would read
/// `a=1,b=2` as the value `1,b=2` of `a`), an option that needs a value and
/// has none, and an empty value after `=` (llvm::cl reads `flag=` as true
/// and takes `name=` as an empty string: most likely a value left out).
LogicalResult checkOptionNames(StringRef owner, StringRef text,
                               ArrayRef<OptionSpelling> options,
                               raw_ostream &errorStream);

//===----------------------------------------------------------------------===//
// Reporting bad values
//===----------------------------------------------------------------------===//

/// While alive, the parsers of etcopy's option types (EnumOptionParser,
/// BoolOptionParser, IntegerOptionParser) report a bad value of an option
/// of `owner` to `errorStream`, as one line naming the option and its
/// owner. Outside any scope they report through llvm::cl, on stderr after
/// the program name. Scopes nest; each thread has its own.
class OptionErrorScope {
public:
  OptionErrorScope(StringRef owner, raw_ostream &errorStream);
  ~OptionErrorScope();
  OptionErrorScope(const OptionErrorScope &) = delete;
  OptionErrorScope &operator=(const OptionErrorScope &) = delete;

  /// Reports that the value given to `option` (spelled `argName`) is bad,
  /// `message` saying why, to the innermost scope. Returns true, as
  /// llvm::cl's parsers do on an error.
  static bool report(const llvm::cl::Option &option, StringRef argName,
                     const Twine &message);

private:
  std::string owner;
  raw_ostream &errorStream;
  OptionErrorScope *enclosing;
};

/// llvm::cl's parser of booleans, reporting through OptionErrorScope.
class BoolOptionParser : public llvm::cl::parser<bool> {
public:
  using llvm::cl::parser<bool>::parser;
  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             bool &value);
};

/// llvm::cl's parser of unsigned integers (`ulong` in --help), reporting
/// through OptionErrorScope.
class IntegerOptionParser : public llvm::cl::parser<unsigned long long> {
public:
  using llvm::cl::parser<unsigned long long>::parser;
  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             unsigned long long &value);
};

//===----------------------------------------------------------------------===//
// Passes and pipelines
//===----------------------------------------------------------------------===//

/// Parses `text` into `options`, the options of the pass or pipeline
/// `owner`: checkOptionNames with `spellings`, then MLIR's parser, with
/// every error (bad values included) reported to `errorStream`.
LogicalResult parseOptions(StringRef owner,
                           ::mlir::detail::PassOptions &options,
                           ArrayRef<OptionSpelling> spellings, StringRef text,
                           raw_ostream &errorStream);

namespace detail {
/// Pass::initializeOptions of an etcopy pass: the checks of
/// checkOptionNames, then MLIR's parser with values reported through
/// OptionErrorScope; every error goes to `errorHandler`.
LogicalResult
initializePassOptions(Pass &pass, StringRef text,
                      function_ref<LogicalResult(const Twine &)> errorHandler);
} // namespace detail

/// The base class of every etcopy pass (`EtCopyPass` in the .td files):
/// OperationPass<OpT> whose options are parsed with the checks above.
template <typename OpT = void>
class EtCopyOperationPass : public OperationPass<OpT> {
public:
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return detail::initializePassOptions(*this, options, errorHandler);
  }

protected:
  using OperationPass<OpT>::OperationPass;
  EtCopyOperationPass(const EtCopyOperationPass &) = default;
};

} // namespace mlir::etcopy

#endif // ETCOPY_SUPPORT_PASSOPTIONS_H
