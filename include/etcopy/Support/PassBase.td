//===- PassBase.td - Base class of etcopy passes -----------*- tablegen -*-===//
//
// EtCopyPass is upstream's Pass over etcopy's pass base class,
// mlir::etcopy::EtCopyOperationPass (etcopy/Support/PassOptions.h): its
// options are checked before MLIR parses them, so that an unknown name comes
// with the nearest valid one and the list of valid ones, and a comma
// between options is reported as such.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_SUPPORT_PASSBASE_TD
#define ETCOPY_SUPPORT_PASSBASE_TD

include "mlir/Pass/PassBase.td"

class EtCopyPass<string passArg, string operation = "">
  : PassBase<passArg,
             "::mlir::etcopy::EtCopyOperationPass<" # operation # ">">;

#endif // ETCOPY_SUPPORT_PASSBASE_TD
