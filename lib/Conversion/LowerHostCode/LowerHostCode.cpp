//===- LowerHostCode.cpp - Run the host lowering stages a module needs ----===//
//
// etcopy-lower-host-code: upstream's host-side lowering passes (linalg to
// loops, strided metadata, affine, scf, math), each run only when the module
// holds an op it rewrites. Every stage is an upstream pass run as a dynamic
// pipeline, so a stage that runs behaves exactly as the pass on its own.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace etcopy {
#define GEN_PASS_DEF_ETCOPYLOWERHOSTCODE
#include "etcopy/Conversion/Passes.h.inc"
} // namespace etcopy
} // namespace mlir

using namespace mlir;

namespace {
/// The operation names and dialect namespaces a module holds.
struct Contents {
  explicit Contents(ModuleOp module) {
    module->walk([&](Operation *op) {
      if (names.insert(op->getName()).second)
        dialects.insert(op->getName().getDialectNamespace());
    });
  }

  DenseSet<OperationName> names;
  llvm::StringSet<> dialects;
};

/// One upstream pass and when it has something to do.
struct Stage {
  OpPassManager pipeline{ModuleOp::getOperationName()};
  /// The stage runs when the module holds an op of this dialect...
  StringRef dialect;
  /// ... or one of these ops, or always if `anyOp`.
  SmallVector<OperationName> roots;
  bool anyOp = false;

  bool isNeeded(const Contents &contents) const {
    if (anyOp || (!dialect.empty() && contents.dialects.contains(dialect)))
      return true;
    return llvm::any_of(roots, [&](OperationName name) {
      return contents.names.contains(name);
    });
  }
};

/// Turns every `scf.if` directly in a function body into branches, in one
/// backward sweep per block: splitting the block after the last `scf.if`
/// first, each split moves only the ops up to the next one, so the sweep is
/// linear in the block. Upstream's convert-scf-to-cf splits in program order,
/// moving every later op each time (and recording each move for rollback):
/// quadratic time and memory in a block of many `scf.if`, such as the
/// conditional frees that lowering a large `bufferization.dealloc` makes.
static void lowerFunctionLevelIfs(ModuleOp module) {
  SmallVector<Block *> blocks;
  module->walk([&](FunctionOpInterface function) {
    for (Block &block : function.getFunctionBody())
      if (llvm::any_of(block, llvm::IsaPred<scf::IfOp>))
        blocks.push_back(&block);
  });
  OpBuilder builder(module.getContext());
  for (Block *block : blocks) {
    SmallVector<scf::IfOp> ifs(block->getOps<scf::IfOp>());
    for (scf::IfOp ifOp : llvm::reverse(ifs)) {
      Location loc = ifOp.getLoc();
      Block *continuation =
          block->splitBlock(std::next(ifOp->getIterator()));
      for (Value result : ifOp.getResults())
        result.replaceAllUsesWith(
            continuation->addArgument(result.getType(), loc));
      Region *parent = block->getParent();
      // Moves a branch's block before the continuation, its yield becoming
      // a branch to the continuation; the continuation for an empty else.
      auto inlineBranch = [&](Region &branch) -> Block * {
        if (branch.empty())
          return continuation;
        Block *entry = &branch.front();
        parent->getBlocks().splice(continuation->getIterator(),
                                   branch.getBlocks());
        auto yield = cast<scf::YieldOp>(entry->getTerminator());
        builder.setInsertionPoint(yield);
        cf::BranchOp::create(builder, yield.getLoc(), continuation,
                             yield.getOperands());
        yield.erase();
        return entry;
      };
      Block *thenBlock = inlineBranch(ifOp.getThenRegion());
      Block *elseBlock = inlineBranch(ifOp.getElseRegion());
      builder.setInsertionPointToEnd(block);
      cf::CondBranchOp::create(builder, loc, ifOp.getCondition(), thenBlock,
                               ValueRange(), elseBlock, ValueRange());
      ifOp.erase();
    }
  }
}

struct LowerHostCodePass
    : public etcopy::impl::EtCopyLowerHostCodeBase<LowerHostCodePass> {
  LowerHostCodePass() { buildStages(); }
  LowerHostCodePass(const LowerHostCodePass &other)
      : EtCopyLowerHostCodeBase(other) {
    buildStages();
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<cf::ControlFlowDialect>();
    for (const Stage &stage : stages)
      stage.pipeline.getDependentDialects(registry);
  }

  void runOnOperation() override;

private:
  void buildStages();
  void findExpandRoots();

  /// The position of expand-strided-metadata, whose roots findExpandRoots
  /// computes.
  static constexpr size_t kExpandStage = 1;

  /// The position of convert-scf-to-cf, before which function-level scf.if
  /// ops become branches.
  static constexpr size_t kSCFStage = 3;

  SmallVector<Stage, 6> stages;
};
} // namespace

void LowerHostCodePass::buildStages() {
  auto add = [&](std::unique_ptr<Pass> pass, StringRef dialect) {
    Stage &stage = stages.emplace_back();
    stage.pipeline.addPass(std::move(pass));
    stage.dialect = dialect;
  };
  add(createConvertLinalgToLoopsPass(), "linalg");
  // Its roots are known once the context is (findExpandRoots).
  assert(stages.size() == kExpandStage && "stage order");
  add(memref::createExpandStridedMetadataPass(), "");
  add(createLowerAffinePass(), "affine");
  assert(stages.size() == kSCFStage && "stage order");
  add(createSCFToControlFlowPass(), "scf");
  // Math with an LLVM intrinsic becomes the intrinsic, the rest libm calls.
  add(createConvertMathToLLVMPass(), "math");
  add(createConvertMathToLibmPass(), "math");
}

/// expand-strided-metadata applies its patterns greedily: it has work when
/// an op one of them is rooted at is present. Computed when the pass runs
/// (not in initialize), so that the clones a threaded pass manager makes
/// have them too.
void LowerHostCodePass::findExpandRoots() {
  Stage &expand = stages[kExpandStage];
  if (!expand.roots.empty() || expand.anyOp)
    return;
  RewritePatternSet patterns(&getContext());
  memref::populateExpandStridedMetadataPatterns(patterns);
  for (const std::unique_ptr<RewritePattern> &pattern :
       patterns.getNativePatterns()) {
    std::optional<OperationName> root = pattern->getRootKind();
    if (root)
      expand.roots.push_back(*root);
    else
      expand.anyOp = true;
  }
}

void LowerHostCodePass::runOnOperation() {
  findExpandRoots();
  ModuleOp module = getOperation();
  std::optional<Contents> contents(std::in_place, module);
  bool changed = false;
  for (Stage &stage : stages) {
    if (&stage == &stages[kSCFStage] &&
        contents->names.contains(
            OperationName(scf::IfOp::getOperationName(), &getContext()))) {
      lowerFunctionLevelIfs(module);
      changed = true;
      contents.emplace(module);
    }
    if (!stage.isNeeded(*contents))
      continue;
    if (failed(runPipeline(stage.pipeline, module)))
      return signalPassFailure();
    changed = true;
    contents.emplace(module);
  }
  if (!changed)
    markAllAnalysesPreserved();
}
