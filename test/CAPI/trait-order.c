/*===- trait-order.c - etcopy's code first to ask for a trait ------------===*
 *
 * A C program that builds a module through the C API alone (nothing parses
 * or verifies it), runs convert-etcopy-to-gpu on it, whose code is the
 * first in the process to ask an op for OpTrait::IsTerminator, and then
 * asks upstream's C API for the function's terminator. The TypeIDs of such
 * traits are registered by a name the compiler writes; upstream's C API
 * (libEtCopyMLIRCAPIIR.so, clang) and etcopy's code (any compiler) must
 * still agree (lib/CAPI/CMakeLists.txt). Output checked by trait-order.test.
 *
 *===----------------------------------------------------------------------===*/

#include "etcopy-c/Pipelines.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  etcopyRegisterPipelineDependencies(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  etcopyRegisterPasses();

  /* func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> { return %x } */
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirModule module = mlirModuleCreateEmpty(loc);
  int64_t shape[] = {4};
  MlirType tensor = mlirRankedTensorTypeGet(1, shape, mlirF32TypeGet(ctx),
                                            mlirAttributeGetNull());
  MlirRegion body = mlirRegionCreate();
  MlirBlock entry = mlirBlockCreate(1, &tensor, &loc);
  mlirRegionAppendOwnedBlock(body, entry);
  MlirValue x = mlirBlockGetArgument(entry, 0);
  MlirOperationState returnState = mlirOperationStateGet(str("func.return"), loc);
  mlirOperationStateAddOperands(&returnState, 1, &x);
  mlirBlockAppendOwnedOperation(entry, mlirOperationCreate(&returnState));
  MlirNamedAttribute attributes[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")),
                            mlirStringAttrGet(ctx, str("method"))),
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, str("function_type")),
          mlirTypeAttrGet(mlirFunctionTypeGet(ctx, 1, &tensor, 1, &tensor)))};
  MlirOperationState funcState = mlirOperationStateGet(str("func.func"), loc);
  mlirOperationStateAddAttributes(&funcState, 2, attributes);
  mlirOperationStateAddOwnedRegions(&funcState, 1, &body);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module),
                                mlirOperationCreate(&funcState));

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          str("builtin.module(convert-etcopy-to-gpu)"), print, NULL)))
    return 2;
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  printf("lowered: %d\n",
         mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, moduleOp)));
  MlirOperation terminator = mlirBlockGetTerminator(entry);
  MlirStringRef name = mlirOperationIsNull(terminator)
                           ? str("none")
                           : mlirIdentifierStr(mlirOperationGetName(terminator));
  printf("terminator: %.*s\n", (int)name.length, name.data);
  MlirSymbolTable symbols = mlirSymbolTableCreate(moduleOp);
  printf("symbol table: %d\n", !mlirSymbolTableIsNull(symbols));

  mlirSymbolTableDestroy(symbols);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
