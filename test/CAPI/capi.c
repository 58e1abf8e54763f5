/*===- capi.c - Test of etcopy's C API -----------------------------------===*
 *
 * A C program using only MLIR's and etcopy's C APIs: the dialect handle, the
 * device attribute, pipeline options (defaults, text, errors), and
 * --etcopy-to-cuda run on a parsed module, built both from the C API's
 * builder and from a textual pipeline. Output checked by capi.test.
 *
 *===----------------------------------------------------------------------===*/

#include "etcopy-c/Dialects.h"
#include "etcopy-c/Pipelines.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static const char *kMethod =
    "func.func private @scale(tensor<4xf32>) -> tensor<4xf32>\n"
    "    attributes {etcopy.device = #etcopy.device<cuda:0>}\n"
    "func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %s = func.call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %s : tensor<4xf32>\n"
    "}\n";

/* Runs `build` (or `pipeline`, textually) on kMethod and prints the
   result. */
static int lower(MlirContext ctx, const EtCopyPipelineOptions *options,
                 const char *pipeline) {
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kMethod));
  if (mlirModuleIsNull(module))
    return 1;
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  if (pipeline) {
    if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
            opm, mlirStringRefCreateFromCString(pipeline), print, NULL)))
      return 2;
  } else {
    etcopyBuildToCUDAPipeline(opm, options);
  }
  int status = mlirLogicalResultIsFailure(
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)));
  if (!status)
    mlirOperationPrint(mlirModuleGetOperation(module), print, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  return status ? 3 : 0;
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  etcopyRegisterPipelineDependencies(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);

  /* The dialect handle. */
  MlirStringRef ns = mlirDialectHandleGetNamespace(mlirGetDialectHandle__etcopy__());
  printf("namespace: %.*s\n", (int)ns.length, ns.data);

  /* The device attribute. */
  MlirAttribute device = etcopyDeviceAttrGet(ctx, EtCopyDeviceKindCUDA, 1);
  printf("device: ");
  mlirAttributePrint(device, print, NULL);
  printf(" kind=%d ordinal=%u host=%d isa=%d\n", etcopyDeviceAttrGetKind(device),
         etcopyDeviceAttrGetOrdinal(device), etcopyDeviceAttrIsHost(device),
         etcopyAttributeIsADevice(device));
  MlirAttribute parsed = mlirAttributeParseGet(
      ctx, mlirStringRefCreateFromCString("#etcopy.device<CUDA:1>"));
  printf("parsed equal: %d\n", mlirAttributeEqual(parsed, device));
  printf("host: %d, integer isa: %d\n",
         etcopyDeviceAttrIsHost(etcopyDeviceAttrGet(ctx, EtCopyDeviceKindCPU, 0)),
         etcopyAttributeIsADevice(mlirIntegerAttrGet(
             mlirIntegerTypeGet(ctx, 32), 7)));
  printf("invalid: %d\n", mlirAttributeIsNull(etcopyDeviceAttrGet(
                              ctx, EtCopyDeviceKindCPU, 3)));

  /* Options: the defaults, text over them, and a bad value. */
  EtCopyPipelineOptions options = etcopyPipelineOptionsGetDefault();
  printf("defaults: place=%d skip-h2d=%d skip-d2h=%d optimize=%d plan=%d "
         "arenas=%d async=%d batch=%d pinned=%d upload-group=%llu\n",
         options.placeCopies, options.skipH2DForMethodInputs,
         options.skipD2HForMethodOutputs, options.optimizeTransfers,
         options.planMemory, options.arenaOwnership, options.async,
         options.batchCopies, options.pinnedHostMemory,
         (unsigned long long)options.uploadGroupBytes);
  if (mlirLogicalResultIsFailure(etcopyPipelineOptionsParse(
          mlirStringRefCreateFromCString(
              "skip-h2d-for-method-inputs=true arena-ownership=caller "
              "pinned-host-memory=true upload-group-bytes=4096"),
          &options, print, NULL)))
    return 4;
  printf("parsed: skip-h2d=%d arenas=%d pinned=%d upload-group=%llu\n",
         options.skipH2DForMethodInputs, options.arenaOwnership,
         options.pinnedHostMemory,
         (unsigned long long)options.uploadGroupBytes);
  EtCopyPipelineOptions unchanged = options;
  if (mlirLogicalResultIsSuccess(etcopyPipelineOptionsParse(
          mlirStringRefCreateFromCString("no-such-option=1"), &options, print,
          NULL)))
    return 5;
  printf("\nbad option rejected, options unchanged: %d\n",
         memcmp(&unchanged, &options, sizeof options) == 0);

  /* The pipeline, from the builder and from text. */
  int status = lower(ctx, &options, NULL);
  if (!status) {
    etcopyRegisterPasses();
    etcopyRegisterPasses(); /* twice is fine */
    status = lower(ctx, NULL, "builtin.module(etcopy-to-cuda{plan-memory=false})");
  }
  mlirContextDestroy(ctx);
  return status;
}
