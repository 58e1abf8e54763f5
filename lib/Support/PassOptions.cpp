//===- PassOptions.cpp - Option parsing with errors that help -*- C++ -*-===//
//
// Implements etcopy/Support/PassOptions.h: the checks of option names and
// separators run before MLIR's parser (which reads options the way
// mlir/lib/Pass/PassRegistry.cpp does: space-separated `name[=value]`, a
// value running to the next space outside quotes and braces), the scope
// that collects the errors of etcopy's value parsers, and the
// initializeOptions of etcopy's passes.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Support/PassOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// Splitting option text
//===----------------------------------------------------------------------===//

namespace {
/// One `name[=value]` of an option string, as MLIR's parser splits it.
struct OptionToken {
  /// The whole `name=value`.
  StringRef text;
  StringRef name;
  /// The value as written (quotes and braces kept), if there is a `=`.
  std::optional<StringRef> value;
};
} // namespace

/// The end of the quoted or braced range that starts at `text[pos]`, or
/// `pos` when none starts there (MLIR's rules: a quote runs to the same
/// quote, braces nest and may hold quotes).
static size_t skipGroup(StringRef text, size_t pos) {
  char c = text[pos];
  if (c == '\'' || c == '"') {
    size_t close = text.find(c, pos + 1);
    return close == StringRef::npos ? text.size() - 1 : close;
  }
  if (c != '{')
    return pos;
  unsigned depth = 0;
  for (size_t i = pos, e = text.size(); i < e; ++i) {
    if (text[i] == '\'' || text[i] == '"')
      i = skipGroup(text, i);
    else if (text[i] == '{')
      ++depth;
    else if (text[i] == '}' && --depth == 0)
      return i;
  }
  return text.size() - 1;
}

/// `name` without the quotes or braces around it, which MLIR drops.
static StringRef unquote(StringRef name) {
  if (name.size() >= 2 && ((name.front() == '\'' && name.back() == '\'') ||
                           (name.front() == '"' && name.back() == '"') ||
                           (name.front() == '{' && name.back() == '}')))
    return name.drop_front().drop_back().trim();
  return name;
}

/// Splits `text` as PassOptions::parseFromString does: names run to a space
/// or `=`, values to the next space outside quotes and braces.
static SmallVector<OptionToken> splitOptions(StringRef text) {
  SmallVector<OptionToken> tokens;
  while (!(text = text.ltrim()).empty()) {
    size_t nameEnd = text.find_first_of(" =");
    size_t end = nameEnd;
    if (nameEnd != StringRef::npos && text[nameEnd] == '=') {
      for (end = nameEnd + 1; end < text.size() && text[end] != ' '; ++end)
        end = skipGroup(text, end);
    }
    end = std::min(end, text.size());
    OptionToken token;
    token.text = text.take_front(end);
    token.name = unquote(token.text.take_front(nameEnd).trim());
    if (nameEnd < end)
      token.value = token.text.drop_front(nameEnd + 1);
    tokens.push_back(token);
    text = text.drop_front(end);
  }
  return tokens;
}

/// The positions of the commas of `text` outside quotes and braces.
static SmallVector<size_t> findTopLevelCommas(StringRef text) {
  SmallVector<size_t> commas;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    i = skipGroup(text, i);
    if (i < e && text[i] == ',')
      commas.push_back(i);
  }
  return commas;
}

//===----------------------------------------------------------------------===//
// Checking names
//===----------------------------------------------------------------------===//

static const OptionSpelling *lookup(ArrayRef<OptionSpelling> options,
                                    StringRef name) {
  auto *it = llvm::find_if(options, [&](const OptionSpelling &option) {
    return option.name == name;
  });
  return it == options.end() ? nullptr : it;
}

/// The names `name` was probably meant to be: those it begins (it was cut
/// short), else those fewest edits away, when that is few for their length
/// (a typo).
static SmallVector<StringRef> findNearest(StringRef name,
                                          ArrayRef<OptionSpelling> options) {
  SmallVector<StringRef> nearest;
  for (const OptionSpelling &option : options)
    if (StringRef(option.name).starts_with(name))
      nearest.push_back(option.name);
  if (!nearest.empty())
    return nearest;
  unsigned best = ~0u;
  for (const OptionSpelling &option : options) {
    StringRef candidate = option.name;
    unsigned limit = std::max<size_t>(2, candidate.size() / 3);
    unsigned distance =
        candidate.edit_distance(name, /*AllowReplacements=*/true,
                                /*MaxEditDistance=*/limit + 1);
    if (distance > limit || distance > best)
      continue;
    if (distance < best)
      nearest.clear();
    best = distance;
    nearest.push_back(candidate);
  }
  return nearest;
}

/// `text` with the commas that separate two options (a comma outside quotes
/// and braces followed, after any spaces, by a valid name and then `=`,
/// `,`, a space or the end) replaced by spaces; empty when there is none.
static std::string separateAtCommas(StringRef text,
                                    ArrayRef<OptionSpelling> options) {
  std::string separated;
  size_t copied = 0;
  for (size_t comma : findTopLevelCommas(text)) {
    StringRef next = text.drop_front(comma + 1).ltrim().take_until(
        [](char c) { return c == '=' || c == ',' || c == ' '; });
    if (!lookup(options, next))
      continue;
    separated += StringRef(text.data() + copied, comma - copied).rtrim();
    separated += ' ';
    copied = comma + 1;
    while (copied < text.size() && text[copied] == ' ')
      ++copied;
  }
  if (copied == 0)
    return std::string();
  separated += text.drop_front(copied);
  return StringRef(separated).trim().str();
}

LogicalResult mlir::etcopy::checkOptionNames(StringRef owner, StringRef text,
                                             ArrayRef<OptionSpelling> options,
                                             raw_ostream &errorStream) {
  // MLIR separates options with spaces and reads everything up to the next
  // one as the value: "a=1,b=2" would give `a` the value "1,b=2".
  std::string separated = separateAtCommas(text, options);
  if (!separated.empty()) {
    errorStream << "options of '" << owner
                << "' are separated by spaces, not commas: write '" << separated
                << "'\n";
    return failure();
  }
  for (const OptionToken &token : splitOptions(text)) {
    if (token.name.empty())
      continue;
    const OptionSpelling *option = lookup(options, token.name);
    if (!option) {
      if (options.empty()) {
        errorStream << "'" << owner << "' takes no options, got '" << token.text
                    << "'\n";
        return failure();
      }
      errorStream << "'" << owner << "' has no option '" << token.name << "'";
      SmallVector<StringRef> nearest = findNearest(token.name, options);
      if (nearest.empty()) {
        errorStream << "; valid options: ";
      } else {
        errorStream << "; did you mean ";
        llvm::interleave(
            nearest, errorStream,
            [&](StringRef name) { errorStream << "'" << name << "'"; }, " or ");
        errorStream << "? Valid options: ";
      }
      llvm::interleave(
          options, errorStream,
          [&](const OptionSpelling &option) { errorStream << option.name; },
          ", ");
      errorStream << "\n";
      return failure();
    }
    if (option->needsValue && !token.value) {
      errorStream << "option '" << option->name << "' of '" << owner
                  << "' needs a value: '" << option->name << "=...'\n";
      return failure();
    }
    // llvm::cl reads a boolean's empty value as true and takes an empty
    // string: `async=` and `kernel-chip=` are most likely a value left out.
    if (token.value && token.value->empty()) {
      errorStream << "option '" << option->name << "' of '" << owner
                  << "' has an empty value: write ";
      if (option->needsValue)
        errorStream << "'" << option->name << "=...'\n";
      else
        errorStream << "'" << option->name << "', '" << option->name
                    << "=true' or '" << option->name << "=false'\n";
      return failure();
    }
  }
  return success();
}

/// The options of a pass, from its printed options ("{name=value ...}",
/// sorted by name; nothing when it has none). Of llvm::cl's parsers only
/// the boolean one takes a name alone (as true): an option printed with
/// another value than true or false needs one.
static std::vector<OptionSpelling> getPrintedSpellings(StringRef printed) {
  StringRef text = printed.trim();
  if (text.consume_front("{"))
    text.consume_back("}");
  std::vector<OptionSpelling> spellings;
  for (const OptionToken &token : splitOptions(text)) {
    bool isBool =
        token.value && (*token.value == "true" || *token.value == "false");
    spellings.push_back({token.name.str(), /*needsValue=*/!isBool});
  }
  return spellings;
}

//===----------------------------------------------------------------------===//
// Reporting bad values
//===----------------------------------------------------------------------===//

static thread_local OptionErrorScope *innermostScope = nullptr;

OptionErrorScope::OptionErrorScope(StringRef owner, raw_ostream &errorStream)
    : owner(owner.str()), errorStream(errorStream), enclosing(innermostScope) {
  innermostScope = this;
}

OptionErrorScope::~OptionErrorScope() { innermostScope = enclosing; }

bool OptionErrorScope::report(const llvm::cl::Option &option, StringRef argName,
                              const Twine &message) {
  if (argName.empty())
    argName = option.ArgStr;
  if (!innermostScope)
    return const_cast<llvm::cl::Option &>(option).error(message, argName);
  innermostScope->errorStream << "option '" << argName << "' of '"
                              << innermostScope->owner << "': " << message
                              << "\n";
  return true;
}

bool BoolOptionParser::parse(llvm::cl::Option &option, StringRef argName,
                             StringRef arg, bool &value) {
  // The spellings llvm::cl::parser<bool> accepts; no value means true.
  if (llvm::is_contained({"", "true", "TRUE", "True", "1"}, arg)) {
    value = true;
    return false;
  }
  if (llvm::is_contained({"false", "FALSE", "False", "0"}, arg)) {
    value = false;
    return false;
  }
  return OptionErrorScope::report(option, argName,
                                  "'" + arg +
                                      "' is not a boolean; expected true or "
                                      "false");
}

bool IntegerOptionParser::parse(llvm::cl::Option &option, StringRef argName,
                                StringRef arg, unsigned long long &value) {
  // Radix 0, as llvm::cl: decimal, 0x hexadecimal, 0 octal, 0b binary.
  if (!arg.getAsInteger(0, value))
    return false;
  return OptionErrorScope::report(
      option, argName, "'" + arg + "' is not an unsigned 64-bit integer");
}

//===----------------------------------------------------------------------===//
// Passes and pipelines
//===----------------------------------------------------------------------===//

LogicalResult mlir::etcopy::parseOptions(StringRef owner,
                                         ::mlir::detail::PassOptions &options,
                                         ArrayRef<OptionSpelling> spellings,
                                         StringRef text,
                                         raw_ostream &errorStream) {
  if (failed(checkOptionNames(owner, text, spellings, errorStream)))
    return failure();
  OptionErrorScope scope(owner, errorStream);
  return options.parseFromString(text, errorStream);
}

LogicalResult mlir::etcopy::detail::initializePassOptions(
    Pass &pass, StringRef text,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  StringRef owner = pass.getArgument();
  // The pass's options, from its textual form ("name{options}"): the only
  // public view of them. An empty list option is not printed, so it would
  // be refused as unknown: etcopy passes declare none.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  pass.printAsTextualPipeline(os);
  std::vector<OptionSpelling> spellings =
      getPrintedSpellings(StringRef(printed).drop_front(owner.size()));

  std::string message;
  llvm::raw_string_ostream errors(message);
  if (failed(checkOptionNames(owner, text, spellings, errors)))
    return errorHandler(StringRef(message).rtrim());
  OptionErrorScope scope(owner, errors);
  if (succeeded(pass.Pass::initializeOptions(text, [&](const Twine &error) {
        errors << error;
        return failure();
      })))
    return success();
  // llvm::cl's own parsers (booleans and integers declared in ODS) report
  // on stderr, not here.
  if (StringRef(message).trim().empty())
    return errorHandler("bad value in the options '" + text + "' of '" + owner +
                        "' (reported above)");
  return errorHandler(StringRef(message).rtrim());
}
