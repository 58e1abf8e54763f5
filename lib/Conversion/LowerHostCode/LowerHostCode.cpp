//===- LowerHostCode.cpp - Run the host lowering stages a module needs ----===//
//
// etcopy-lower-host-code: upstream's host-side lowering passes (linalg to
// loops, strided metadata, affine, scf, math), each run only when the module
// holds an op it rewrites. Every stage is an upstream pass run as a dynamic
// pipeline, so a stage that runs behaves exactly as the pass on its own;
// before convert-scf-to-cf, its patterns are applied in one backward sweep
// that keeps the lowering linear in the size of a block.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"

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
#include "mlir/IR/Iterators.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
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

/// Whether upstream's convert-scf-to-cf lowers `op` straight to branches,
/// making no other `scf` op.
static bool isLoweredBySweep(Operation *op) {
  return isa<scf::ForOp, scf::IfOp, scf::WhileOp, scf::ExecuteRegionOp,
             scf::IndexSwitchOp>(op);
}

/// Counts the ops that rewrites move from one place to another. With a
/// listener attached, a rewriter's block split moves the ops after the split
/// point one by one and reports each move.
struct MoveCounter : public RewriterBase::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    if (previous.isSet())
      ++moved;
  }

  uint64_t moved = 0;
};

/// What lowerControlFlowBackward did.
struct SweepCounts {
  uint64_t lowered = 0;
  uint64_t moved = 0;
};

/// Lowers the `scf` ops that become branches (isLoweredBySweep) with
/// upstream's convert-scf-to-cf patterns, but visiting each block's ops
/// last to first. Each pattern splits the op's block before the op and
/// moves the ops after it to the new block: in that order they are only the
/// ops up to the next op already lowered, so that every op moves once and
/// the sweep is linear. Upstream's pass visits them first to last, moving
/// all the later ops of the block each time (and recording each move for
/// rollback): quadratic time and memory in a block of many loops or
/// conditionals, such as a method alternating delegate calls with
/// elementwise host code (one loop each) or the conditional frees that
/// lowering a large `bufferization.dealloc` makes.
///
/// An op is visited before the ops nested in it, as the conversion visits
/// them, so that each pattern sees the single-block regions it sees there;
/// the output is the pass's. `scf.parallel` and `scf.forall` (which become
/// other `scf` ops) and what they hold are left to the pass itself. Returns
/// how many ops were lowered and how many ops the rewrites moved.
static SweepCounts lowerControlFlowBackward(ModuleOp module) {
  SmallVector<Operation *> ops;
  module->walk<WalkOrder::PreOrder, ReverseIterator>([&](Operation *op) {
    if (isa<scf::ParallelOp, scf::ForallOp>(op))
      return WalkResult::skip();
    if (isLoweredBySweep(op))
      ops.push_back(op);
    return WalkResult::advance();
  });
  SweepCounts counts;
  if (ops.empty())
    return counts;
  MLIRContext *context = module.getContext();
  RewritePatternSet patterns(context);
  populateSCFToControlFlowConversionPatterns(patterns);
  FrozenRewritePatternSet frozen(std::move(patterns));
  PatternApplicator applicator(frozen);
  applicator.applyDefaultCostModel();
  MoveCounter moves;
  PatternRewriter rewriter(context);
  rewriter.setListener(&moves);
  for (Operation *op : ops) {
    // A pattern that does not apply leaves its op to the pass.
    rewriter.setInsertionPoint(op);
    if (succeeded(applicator.matchAndRewrite(op, rewriter)))
      ++counts.lowered;
  }
  counts.moved = moves.moved;
  return counts;
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

  /// The position of convert-scf-to-cf, before which the sweep
  /// (lowerControlFlowBackward) lowers what it can.
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
  SweepCounts counts;
  for (Stage &stage : stages) {
    if (&stage == &stages[kSCFStage] && stage.isNeeded(*contents)) {
      counts = lowerControlFlowBackward(module);
      if (counts.lowered) {
        changed = true;
        contents.emplace(module);
      }
    }
    if (!stage.isNeeded(*contents))
      continue;
    if (failed(runPipeline(stage.pipeline, module)))
      return signalPassFailure();
    changed = true;
    contents.emplace(module);
  }
  numSweptOps += counts.lowered;
  numMovedOps += counts.moved;
  etcopy::remarkSummary(module, getArgument(),
                        {{"swept-ops", counts.lowered},
                         {"moved-ops", counts.moved}});
  if (!changed)
    markAllAnalysesPreserved();
}
