//===- EnumOptionParser.h - Enumerated pass options -----------*- C++ -*-===//
//
// A parser for enumerated pass and pipeline options that rejects an unknown
// value at parse time with one line naming the option and every accepted
// value, instead of llvm::cl's "Cannot find option named" (or a string
// option checked when the pass runs, which fails only after the input was
// read and prints the whole module with the error).
//
// Options declared in C++ name it as their parser. Options declared in ODS
// (`Option<..., "ArenaOwnership", ...>` in a Passes.td) cannot name a
// parser: ETCOPY_DECLARE_ENUM_OPTION_PARSER makes it the llvm::cl::parser of
// the enum, which MLIR's pass options then use. The error goes where
// OptionErrorScope says (etcopy/Support/PassOptions.h).
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_SUPPORT_ENUMOPTIONPARSER_H
#define ETCOPY_SUPPORT_ENUMOPTIONPARSER_H

#include "etcopy/Support/PassOptions.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::etcopy {

/// The parser of an option of enumeration type `EnumT` declared with
/// `llvm::cl::values(...)`: llvm::cl::parser<EnumT>'s table of values, with
/// an error that lists them. The enum needs an `operator<<` printing the
/// value's name, which pipeline printing (`--dump-pass-pipeline`) uses for
/// options that name this parser.
template <typename EnumT>
class EnumOptionParser : public llvm::cl::generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(StringRef name, EnumT value, StringRef help)
        : GenericOptionInfo(name, help), V(value) {}
    llvm::cl::OptionValue<EnumT> V;
  };
  SmallVector<OptionInfo, 4> Values;

public:
  using parser_data_type = EnumT;

  EnumOptionParser(llvm::cl::Option &option) : generic_parser_base(option) {}

  unsigned getNumOptions() const override { return Values.size(); }
  StringRef getOption(unsigned n) const override { return Values[n].Name; }
  StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// Returns true (after reporting the error) when `arg` names no value.
  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             EnumT &value) {
    for (const OptionInfo &entry : Values) {
      if (entry.Name == arg) {
        value = entry.V.getValue();
        return false;
      }
    }
    std::string accepted;
    llvm::raw_string_ostream os(accepted);
    llvm::interleave(
        Values, os, [&](const OptionInfo &entry) { os << entry.Name; }, ", ");
    return OptionErrorScope::report(option, argName,
                                    "'" + arg +
                                        "' is not a valid value; expected "
                                        "one of: " +
                                        accepted);
  }

  /// Called by `llvm::cl::values`.
  template <typename T>
  void addLiteralOption(StringRef name, const T &value, StringRef help) {
    Values.emplace_back(name, static_cast<EnumT>(value), help);
    llvm::cl::AddLiteralOption(Owner, name);
  }

  void removeLiteralOption(StringRef name) {
    Values.erase(Values.begin() + findOption(name));
  }
};

} // namespace mlir::etcopy

/// Makes EnumOptionParser the llvm::cl::parser of `EnumT`, so that options
/// of that type declared in ODS use it. Use at global scope, with the fully
/// qualified enum, right after the enum.
#define ETCOPY_DECLARE_ENUM_OPTION_PARSER(EnumT)                               \
  template <>                                                                  \
  class llvm::cl::parser<EnumT>                                                \
      : public ::mlir::etcopy::EnumOptionParser<EnumT> {                       \
  public:                                                                      \
    using ::mlir::etcopy::EnumOptionParser<EnumT>::EnumOptionParser;           \
  };

#endif // ETCOPY_SUPPORT_ENUMOPTIONPARSER_H
