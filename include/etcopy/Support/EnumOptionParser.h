//===- EnumOptionParser.h - Enumerated pass options -----------*- C++ -*-===//
//
// A parser for enumerated pass and pipeline options that rejects an unknown
// value at parse time with one line naming the option and every accepted
// value, instead of llvm::cl's "Cannot find option named" (or a string
// option checked when the pass runs, which fails only after the input was
// read and prints the whole module with the error).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_SUPPORT_ENUMOPTIONPARSER_H
#define ETCOPY_SUPPORT_ENUMOPTIONPARSER_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::etcopy {

/// Use as the parser of `Option<EnumT, EnumOptionParser<EnumT>>` declared
/// with `llvm::cl::values(...)`. The enum needs an `operator<<` printing the
/// value's name, which pipeline printing (`--dump-pass-pipeline`) uses.
template <typename EnumT>
struct EnumOptionParser : public llvm::cl::parser<EnumT> {
  using llvm::cl::parser<EnumT>::parser;

  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             EnumT &value) {
    for (const auto &entry : this->Values) {
      if (entry.Name == arg) {
        value = entry.V.getValue();
        return false;
      }
    }
    std::string accepted;
    llvm::raw_string_ostream os(accepted);
    llvm::interleave(
        this->Values, os, [&](const auto &entry) { os << entry.Name; }, ", ");
    return option.error("'" + arg + "' is not a valid value; expected one of: " +
                            accepted,
                        argName);
  }
};

} // namespace mlir::etcopy

#endif // ETCOPY_SUPPORT_ENUMOPTIONPARSER_H
