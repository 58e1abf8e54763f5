//===- CleanUp.cpp - Clean-up after the CUDA lowering -----------*- C++ -*-===//
//
// Folds what the conversion to the LLVM dialect leaves behind (the casts
// that cancel out, descriptor fields read back from descriptors just built,
// constant size arithmetic, duplicate constants, dead ops), in one pass over
// each function and one back.
//
//===----------------------------------------------------------------------===//

#include "CleanUp.h"

#include "CopyClassification.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::etcopy::cuda_lowering {

void reconcileCasts(ModuleOp module) {
  SmallVector<UnrealizedConversionCastOp> casts;
  module.walk([&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
  reconcileUnrealizedCasts(casts);
}

/// The byte size `ptrtoint(getelementptr null[N])` computes, the
/// conversion's idiom for sizeof(element) * N, if `op` is that idiom with a
/// constant N, an element whose size getStaticElementBytes knows without
/// the data layout, and a product that fits in the result type.
static std::optional<APInt> getConstantByteOffset(LLVM::PtrToIntOp op,
                                                  unsigned indexBitwidth) {
  auto gep = op.getArg().getDefiningOp<LLVM::GEPOp>();
  auto resultType = dyn_cast<IntegerType>(op.getType());
  if (!gep || !resultType || !gep.getBase().getDefiningOp<LLVM::ZeroOp>() ||
      !gep.getDynamicIndices().empty() ||
      gep.getRawConstantIndices().size() != 1)
    return std::nullopt;
  int64_t count = gep.getRawConstantIndices().front();
  std::optional<int64_t> elementBytes =
      getStaticElementBytes(gep.getElemType(), indexBitwidth);
  if (count < 0 || !elementBytes)
    return std::nullopt;
  APInt bytes = APInt(128, static_cast<uint64_t>(count)) *
                static_cast<uint64_t>(*elementBytes);
  if (bytes.getActiveBits() >= resultType.getWidth())
    return std::nullopt;
  return bytes.trunc(resultType.getWidth());
}

/// The value of `op`, an integer add, sub, mul or urem without overflow
/// flags, if its operands are constants (and a divisor is not zero): the
/// LLVM dialect does not fold these, and the conversion's patterns compute
/// padded allocation sizes with them.
static std::optional<APInt> foldIntegerArithmetic(Operation &op) {
  if (!isa<LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::URemOp>(op) ||
      !isa<IntegerType>(op.getResult(0).getType()))
    return std::nullopt;
  if (auto flags = dyn_cast<LLVM::IntegerOverflowFlagsInterface>(op);
      flags && flags.getOverflowFlags() != LLVM::IntegerOverflowFlags::none)
    return std::nullopt;
  APInt lhs, rhs;
  if (!matchPattern(op.getOperand(0), m_ConstantInt(&lhs)) ||
      !matchPattern(op.getOperand(1), m_ConstantInt(&rhs)))
    return std::nullopt;
  return TypeSwitch<Operation *, std::optional<APInt>>(&op)
      .Case([&](LLVM::AddOp) { return lhs + rhs; })
      .Case([&](LLVM::SubOp) { return lhs - rhs; })
      .Case([&](LLVM::MulOp) { return lhs * rhs; })
      .Case([&](LLVM::URemOp) -> std::optional<APInt> {
        if (rhs.isZero())
          return std::nullopt;
        return lhs.urem(rhs);
      })
      .Default(std::nullopt);
}

void cleanUpFunction(LLVM::LLVMFuncOp func, unsigned indexBitwidth,
                     function_ref<void(Operation *)> visitKept) {
  if (func.getBody().empty())
    return;
  Block &entry = func.getBody().front();
  OpBuilder builder(func.getContext());
  // Unique constants by op name, folded value and type; an integer value is
  // keyed by its bits, so `16 : index` and `16 : i64` of type i64 are one.
  using ConstantKey = std::tuple<OperationName, Attribute, Type>;
  DenseMap<ConstantKey, Operation *> constants;
  auto uniqueConstant = [&](Operation &op) {
    Attribute value;
    if (op.getNumOperands() != 0 || op.getNumResults() != 1 ||
        op.getNumRegions() != 0 || !matchPattern(&op, m_Constant(&value)))
      return;
    Type type = op.getResult(0).getType();
    if (auto integer = dyn_cast<IntegerAttr>(value);
        integer && integer.getType() != type && isa<IntegerType>(type))
      value = IntegerAttr::get(type, integer.getValue());
    auto [it, inserted] =
        constants.try_emplace(ConstantKey{op.getName(), value, type}, &op);
    if (!inserted) {
      op.getResult(0).replaceAllUsesWith(it->second->getResult(0));
      op.erase();
      return;
    }
    // The first of its value dominates the rest where it is if it is in the
    // entry block (which is visited first); from another block it moves to
    // the end of the entry block, which dominates every block.
    if (op.getBlock() != &entry)
      op.moveBefore(entry.getTerminator());
  };

  // The reads of descriptor fields so far in the block, by container and
  // position: the first dominates the rest of its block.
  DenseMap<std::pair<Value, Attribute>, LLVM::ExtractValueOp>
      fieldReads;
  for (Block &block : func.getBody()) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::ConstantLike>()) {
        uniqueConstant(op);
        continue;
      }
      std::optional<APInt> folded;
      if (auto toInt = dyn_cast<LLVM::PtrToIntOp>(op))
        folded = getConstantByteOffset(toInt, indexBitwidth);
      else
        folded = foldIntegerArithmetic(op);
      if (folded) {
        Type type = op.getResult(0).getType();
        builder.setInsertionPoint(&op);
        auto constant = LLVM::ConstantOp::create(
            builder, op.getLoc(), type, IntegerAttr::get(type, *folded));
        op.getResult(0).replaceAllUsesWith(constant.getResult());
        op.erase();
        uniqueConstant(*constant);
        continue;
      }
      if (!isa<LLVM::ExtractValueOp, LLVM::GEPOp>(op))
        continue;
      // A GEP first folds its constant operands in place, then may fold
      // away.
      bool erased = false;
      for (int attempt = 0; attempt < 2; ++attempt) {
        SmallVector<OpFoldResult, 1> results;
        if (failed(op.fold(results)))
          break;
        if (results.empty())
          continue;
        if (auto value = dyn_cast<Value>(results.front())) {
          op.getResult(0).replaceAllUsesWith(value);
          op.erase();
          erased = true;
        }
        break;
      }
      // A field read twice in a block (a descriptor's pointer by a copy and
      // by the free) is read once.
      if (erased)
        continue;
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
        auto [it, inserted] = fieldReads.try_emplace(
            {extract.getContainer(), Attribute(extract.getPositionAttr())},
            extract);
        if (!inserted) {
          extract.replaceAllUsesWith(it->second.getResult());
          extract.erase();
        }
      }
    }
    fieldReads.clear();
  }
  for (Block &block : llvm::reverse(func.getBody()))
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
      else if (visitKept)
        visitKept(&op);
}

} // namespace mlir::etcopy::cuda_lowering
