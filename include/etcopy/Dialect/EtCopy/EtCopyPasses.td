//===- EtCopyPasses.td - etcopy transformation passes ------*- tablegen -*-===//
//
// Passes that place copies at delegate boundaries and remove needless ones.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD

include "mlir/Pass/PassBase.td"

def EtCopyPropagateDevice : Pass<"etcopy-propagate-device", "::mlir::ModuleOp"> {
  let summary = "Insert copies at delegate boundaries and propagate devices "
                "into types";
  let description = [{
    (Being written.)
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
  let options = [
    Option<"skipH2DForMethodInputs", "skip-h2d-for-method-inputs", "bool",
           /*default=*/"false",
           "Leave method arguments consumed only by delegates of one device "
           "on that device instead of copying them">,
    Option<"skipD2HForMethodOutputs", "skip-d2h-for-method-outputs", "bool",
           /*default=*/"false",
           "Return method results produced on a device without copying "
           "them to the host">,
  ];
}

def EtCopyOptimizeTransfers
    : Pass<"etcopy-optimize-transfers", "::mlir::ModuleOp"> {
  let summary = "Remove needless host<->device copies";
  let description = [{
    (Being written.)
  }];
  let dependentDialects = ["::mlir::etcopy::EtCopyDialect"];
}

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPYPASSES_TD
