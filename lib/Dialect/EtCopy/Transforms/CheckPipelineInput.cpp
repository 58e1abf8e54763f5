//===- CheckPipelineInput.cpp - What the etcopy pipelines lower -*- C++ -*-===//
//
// etcopy-check-pipeline-input: the first stage of --etcopy-to-cuda and
// --etcopy-to-host, which reports up front the input those pipelines would
// lower only in part, rather than letting a later stage fail far from the
// cause.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYCHECKPIPELINEINPUT
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

namespace {
struct CheckPipelineInputPass
    : public etcopy::impl::EtCopyCheckPipelineInputBase<
          CheckPipelineInputPass> {
  using Base::Base;

  void runOnOperation() override {
    // A module nested deeper is inside one of these, and reported with it.
    bool failed = false;
    for (auto nested : getOperation().getOps<ModuleOp>()) {
      if (nested.getBody()->empty())
        continue;
      nested.emitError("cannot lower the code of a nested 'builtin.module': ")
          << pipeline
          << " lowers one module, and puts the runtime support and the "
             "globals its code refers to in that module; run it on the "
             "nested module instead (with the same options), e.g. -p "
             "'builtin.module(builtin.module("
          << pipeline << "))'";
      failed = true;
    }
    markAllAnalysesPreserved();
    if (failed)
      signalPassFailure();
  }
};
} // namespace
