/*===- capi.c - Test of etcopy's C API -----------------------------------===*
 *
 * A C program using only MLIR's and etcopy's C APIs: the dialect handle, the
 * device attribute, pipeline options (defaults, text, errors), and
 * --etcopy-to-cuda run on a parsed module, built both from the C API's
 * builder and from a textual pipeline. Output checked by capi.test; the
 * errors of the options reach their callback (stdout), never stderr.
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

/* Labels of the messages, passed as user data. */
static char kParse[] = "parse", kBuild[] = "build", kCuda[] = "cuda",
            kHost[] = "host", kNested[] = "nested";

/* Prints a message, with the label `userData` at the start of each call. */
static void printLabelled(MlirStringRef text, void *userData) {
  printf("[%s] ", (const char *)userData);
  print(text, NULL);
}

/* Parses bad `text` over the defaults, reporting to `callback`. */
static void parseBad(const char *text, MlirStringCallback callback) {
  EtCopyPipelineOptions options = etcopyPipelineOptionsGetDefault();
  EtCopyPipelineOptions unchanged = options;
  MlirLogicalResult result = etcopyPipelineOptionsParse(
      mlirStringRefCreateFromCString(text), &options, callback, kParse);
  printf("'%s' rejected: %d, options unchanged: %d\n", text,
         mlirLogicalResultIsFailure(result),
         memcmp(&unchanged, &options, sizeof options) == 0);
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
    if (mlirLogicalResultIsFailure(
            etcopyBuildToCUDAPipeline(opm, options, printLabelled, kBuild)))
      return 2;
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
  printf("null isa: %d\n", etcopyAttributeIsADevice(mlirAttributeGetNull()));

  /* Options: the defaults, text over them, and a bad value. */
  EtCopyPipelineOptions options = etcopyPipelineOptionsGetDefault();
  printf("defaults: place=%d skip-h2d=%d skip-d2h=%d optimize=%d plan=%d "
         "arenas=%d async=%d batch=%d pinned=%d upload-group=%llu "
         "kernel-chip=%s kernel-format=%d cuda-graphs=%d bare-pointers=%d\n",
         options.placeCopies, options.skipH2DForMethodInputs,
         options.skipD2HForMethodOutputs, options.optimizeTransfers,
         options.planMemory, options.arenaOwnership, options.async,
         options.batchCopies, options.pinnedHostMemory,
         (unsigned long long)options.uploadGroupBytes, options.kernelChip,
         options.kernelFormat, options.cudaGraphs,
         options.useBarePointersForKernels);
  if (mlirLogicalResultIsFailure(etcopyPipelineOptionsParse(
          mlirStringRefCreateFromCString(
              "skip-h2d-for-method-inputs=true arena-ownership=caller "
              "pinned-host-memory=false upload-group-bytes=4096 "
              "kernel-chip=sm_80 kernel-format=bin cuda-graphs=true "
              "use-bare-pointers-for-kernels=true"),
          &options, print, NULL)))
    return 4;
  printf("parsed: skip-h2d=%d arenas=%d pinned=%d upload-group=%llu "
         "kernel-chip=%s kernel-format=%d cuda-graphs=%d bare-pointers=%d\n",
         options.skipH2DForMethodInputs, options.arenaOwnership,
         options.pinnedHostMemory,
         (unsigned long long)options.uploadGroupBytes, options.kernelChip,
         options.kernelFormat, options.cudaGraphs,
         options.useBarePointersForKernels);
  EtCopyPipelineOptions unchanged = options;
  if (mlirLogicalResultIsSuccess(etcopyPipelineOptionsParse(
          mlirStringRefCreateFromCString("no-such-option=1"), &options, print,
          NULL)))
    return 5;
  printf("bad option rejected, options unchanged: %d\n",
         memcmp(&unchanged, &options, sizeof options) == 0);

  /* Every error reaches the callback, in one call: a bad value, a name cut
     short, options separated by commas; a NULL callback drops it. */
  parseBad("arena-ownership=owner", printLabelled);
  parseBad("plan-memory=maybe", printLabelled);
  parseBad("upload-group-bytes=-1", printLabelled);
  parseBad("skip-h2d=true", printLabelled);
  parseBad("async=false,plan-memory=false", printLabelled);
  parseBad("arena-ownership=owner", NULL);
  parseBad("skip-h2d", NULL);

  /* What the C types allow but the pipelines do not, and a pass manager
     on functions: refused with a message, nothing appended. */
  MlirPassManager refused = mlirPassManagerCreate(ctx);
  MlirOpPassManager refusedOpm = mlirPassManagerGetAsOpPassManager(refused);
  EtCopyPipelineOptions badArenas = etcopyPipelineOptionsGetDefault();
  badArenas.arenaOwnership = (EtCopyArenaOwnership)7;
  int cudaRefused = mlirLogicalResultIsFailure(
      etcopyBuildToCUDAPipeline(refusedOpm, &badArenas, printLabelled, kCuda));
  int hostRefused = mlirLogicalResultIsFailure(
      etcopyBuildToHostPipeline(refusedOpm, &badArenas, printLabelled, kHost));
  int parseRefused = mlirLogicalResultIsFailure(
      etcopyPipelineOptionsParse(mlirStringRefCreateFromCString("async=true"),
                                 &badArenas, printLabelled, kParse));
  printf("bad arenas refused: %d %d %d, appended: '", cudaRefused, hostRefused,
         parseRefused);
  mlirPrintPassPipeline(refusedOpm, print, NULL);
  printf("'\n");
  EtCopyPipelineOptions badKernels = etcopyPipelineOptionsGetDefault();
  badKernels.kernelFormat = (EtCopyKernelFormat)9;
  int formatRefused = mlirLogicalResultIsFailure(
      etcopyBuildToCUDAPipeline(refusedOpm, &badKernels, printLabelled, kCuda));
  badKernels = etcopyPipelineOptionsGetDefault();
  memset(badKernels.kernelChip, 'x', sizeof badKernels.kernelChip);
  int chipRefused = mlirLogicalResultIsFailure(
      etcopyBuildToCUDAPipeline(refusedOpm, &badKernels, printLabelled, kCuda));
  badKernels = etcopyPipelineOptionsGetDefault();
  parseBad("kernel-chip=sm_90_with_a_name_much_too_long_for_c", printLabelled);
  printf("bad kernels refused: %d %d\n", formatRefused, chipRefused);
  MlirOpPassManager onFunctions = mlirPassManagerGetNestedUnder(
      refused, mlirStringRefCreateFromCString("func.func"));
  printf("nested refused: %d, appended: '",
         mlirLogicalResultIsFailure(etcopyBuildToCUDAPipeline(
             onFunctions, NULL, printLabelled, kNested)));
  mlirPrintPassPipeline(onFunctions, print, NULL);
  printf("'\n");
  mlirPassManagerDestroy(refused);

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
