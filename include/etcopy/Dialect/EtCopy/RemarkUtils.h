//===- RemarkUtils.h - Optimization remarks of the etcopy passes -*- C++ -*-===//
//
// How the etcopy passes report their decisions through MLIR's remark
// framework: category "etcopy" with the pass's flag as subcategory, the
// enclosing function. MLIR's remark filters match the whole category name
// alone, so `--remarks-filter=etcopy` selects every etcopy pass; a remark
// that filter does not select is offered again with the pass's flag as its
// category, so that `--remarks-filter=<pass flag>` (a regular expression:
// `convert-.*`, `etcopy-plan-device-memory|convert-gpu-to-cuda-runtime`)
// selects passes one by one. Nothing is built unless a remark engine is
// installed: without one, each emission costs a pointer test.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_REMARKUTILS_H
#define ETCOPY_DIALECT_ETCOPY_REMARKUTILS_H

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"

#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::etcopy {

/// The category of every etcopy remark, what `--remarks-filter=etcopy`
/// matches.
inline constexpr StringLiteral kRemarkCategory = "etcopy";

/// A remark being built; streams `RemarkArg`s and strings, and is reported
/// when it goes out of scope. False when remarks of its kind and category
/// are disabled: build its text only under `if (auto remark = ...)`.
using InFlightRemark = remark::detail::InFlightRemark;
/// A key-value argument of a remark ("Reason", "Offset", ...).
using RemarkArg = remark::detail::Remark::Arg;

/// Where a value of `type` lives, for remarks: "the host", "cuda:0".
inline std::string getPlaceName(Type type) {
  Placement placement = getPlacement(type);
  if (placement.isDevice())
    return placement.device.str();
  return placement.isHost() ? "the host" : "an unknown place";
}

/// What `value` is, for remarks: "argument #1 of @step", "argument #0 of
/// block #2 of @step", "argument #0 of 'scf.for'", "result #0 of
/// 'func.call'", after the name of a NameLoc (`loc("x")`) where its
/// defining op or argument has one. SSA names are not kept in the IR, and
/// numbering them as the printer does would cost a walk of the function per
/// remark.
inline std::string getRemarkValueName(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto name = dyn_cast<NameLoc>(value.getLoc()))
    os << "'" << name.getName().getValue() << "', ";
  if (auto result = dyn_cast<OpResult>(value)) {
    os << "result #" << result.getResultNumber() << " of '"
       << result.getOwner()->getName() << "'";
    return text;
  }
  auto argument = cast<BlockArgument>(value);
  Block *block = argument.getOwner();
  Operation *parent = block->getParentOp();
  os << "argument #" << argument.getArgNumber() << " of ";
  if (auto function = dyn_cast_or_null<FunctionOpInterface>(parent)) {
    if (!block->isEntryBlock())
      os << "block #"
         << std::distance(block->getParent()->begin(), block->getIterator())
         << " of ";
    os << "@" << function.getName();
  } else if (parent) {
    os << "'" << parent->getName() << "'";
  } else {
    os << "a detached block";
  }
  return text;
}

/// Starts a remark of `kind` named `name`, reported by the pass `pass`
/// (its flag, without dashes) at `loc`, about code of the function that is
/// or encloses `scope`. Empty, at the cost of one test, when no remark
/// engine is installed.
inline InFlightRemark emitEtCopyRemark(remark::RemarkKind kind, Location loc,
                                       Operation *scope, StringRef name,
                                       StringRef pass) {
  if (LLVM_LIKELY(!loc->getContext()->getRemarkEngine()))
    return {};
  StringRef function;
  auto functionOp = dyn_cast<FunctionOpInterface>(scope);
  if (!functionOp)
    functionOp = scope->getParentOfType<FunctionOpInterface>();
  if (functionOp)
    function = functionOp.getName();
  auto emit = [&](remark::RemarkOpts opts) {
    switch (kind) {
    case remark::RemarkKind::RemarkPassed:
      return remark::passed(loc, opts);
    case remark::RemarkKind::RemarkMissed:
      return remark::missed(loc, opts);
    case remark::RemarkKind::RemarkFailure:
      return remark::failed(loc, opts);
    case remark::RemarkKind::RemarkAnalysis:
    case remark::RemarkKind::RemarkUnknown:
      break;
    }
    return remark::analysis(loc, opts);
  };
  auto opts = remark::RemarkOpts::name(name).function(function);
  if (InFlightRemark remark =
          emit(opts.category(kRemarkCategory).subCategory(pass)))
    return remark;
  // `pass` outlives the remark: it is a pass's flag, a string literal.
  return emit(opts.category(pass));
}

/// A decision the pass applied (a copy inserted, moved or elided, a buffer
/// planned).
inline InFlightRemark remarkPassed(Operation *op, StringRef name,
                                   StringRef pass) {
  return emitEtCopyRemark(remark::RemarkKind::RemarkPassed, op->getLoc(), op,
                          name, pass);
}

/// Something the pass left as it is, with the reason (a copy kept, a buffer
/// not planned).
inline InFlightRemark remarkMissed(Operation *op, StringRef name,
                                   StringRef pass) {
  return emitEtCopyRemark(remark::RemarkKind::RemarkMissed, op->getLoc(), op,
                          name, pass);
}

/// Information: a placement chosen, the counts of a pass.
inline InFlightRemark remarkAnalysis(Operation *op, StringRef name,
                                     StringRef pass) {
  return emitEtCopyRemark(remark::RemarkKind::RemarkAnalysis, op->getLoc(), op,
                          name, pass);
}

/// Reports the counts of one run of pass `pass` on `root`, keyed by the
/// names of the statistics that hold them (which a release build of MLIR
/// compiles out). At the location of `root` if it is a function, else of
/// the first function with a body in it (a parsed module's own location is
/// the file's line 0), with no function named: the counts are the module's.
inline void
remarkSummary(Operation *root, StringRef pass,
              ArrayRef<std::pair<StringRef, uint64_t>> counts) {
  if (LLVM_LIKELY(!root->getContext()->getRemarkEngine()))
    return;
  Location loc = root->getLoc();
  if (!isa<FunctionOpInterface>(root)) {
    root->walk<WalkOrder::PreOrder>([&](FunctionOpInterface function) {
      if (function.isExternal())
        return WalkResult::skip();
      loc = function.getLoc();
      return WalkResult::interrupt();
    });
  }
  if (InFlightRemark remark = emitEtCopyRemark(
          remark::RemarkKind::RemarkAnalysis, loc, root, "Summary", pass))
    for (auto [key, count] : counts)
      remark << RemarkArg(key, count);
}

} // namespace mlir::etcopy

#endif // ETCOPY_DIALECT_ETCOPY_REMARKUTILS_H
