/*===- Pipelines.h - C API of etcopy's passes and pipelines -------*- C -*-===*\
|*                                                                            *|
|* Registration of etcopy's passes and of everything its pipelines need,    *|
|* and the --etcopy-to-cuda / --etcopy-to-host pipelines with their options, *|
|* for C programs and bindings that drive MLIR through its C API.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_C_PIPELINES_H
#define ETCOPY_C_PIPELINES_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers etcopy's passes, conversions and the named pipelines
   etcopy-to-cuda and etcopy-to-host, so that mlirParsePassPipeline accepts
   them. Safe to call more than once. */
MLIR_CAPI_EXPORTED void etcopyRegisterPasses(void);

/* Inserts into `registry` everything the pipelines need: the etcopy dialect,
   the upstream dialects they read and produce, and the external models of
   their stages (etcopy::registerPipelineDependencies); also registers the
   passes as etcopyRegisterPasses does. */
MLIR_CAPI_EXPORTED void
etcopyRegisterPipelineDependencies(MlirDialectRegistry registry);

/* Who allocates a planned function's arenas. */
typedef enum EtCopyArenaOwnership {
  EtCopyArenaOwnershipFunction = 0,
  EtCopyArenaOwnershipCaller = 1
} EtCopyArenaOwnership;

/* The object --etcopy-to-cuda makes of each gpu.module. */
typedef enum EtCopyKernelFormat {
  EtCopyKernelFormatIsa = 0,   /* PTX, compiled by the driver at load */
  EtCopyKernelFormatBin = 1,   /* a cubin (ptxas at compile time) */
  EtCopyKernelFormatFatbin = 2 /* a fatbin */
} EtCopyKernelFormat;

/* The longest kernel chip name, with its NUL ("sm_90"). */
#define ETCOPY_KERNEL_CHIP_SIZE 32

/* The options of --etcopy-to-cuda (the host pipeline reads the first four
   and uploadGroupBytes).
   See docs/Pipeline.md. New options are appended: the struct grew with
   kernelChip and kernelFormat, then with cudaGraphs, then with
   useBarePointersForKernels, so a program compiled
   against an older header must be rebuilt (its struct is shorter than the
   library reads). Start from etcopyPipelineOptionsGetDefault(). */
typedef struct EtCopyPipelineOptions {
  bool placeCopies;
  bool skipH2DForMethodInputs;
  bool skipD2HForMethodOutputs;
  bool optimizeTransfers;
  bool planMemory;
  EtCopyArenaOwnership arenaOwnership;
  bool async;
  bool batchCopies;
  bool pinnedHostMemory;
  uint64_t uploadGroupBytes;
  /* The chip the kernels are compiled for, NUL-terminated. */
  char kernelChip[ETCOPY_KERNEL_CHIP_SIZE];
  EtCopyKernelFormat kernelFormat;
  /* Capture stream-ordered functions into CUDA graphs (cuda-graphs). */
  bool cudaGraphs;
  /* Compile and launch kernels with bare pointers for memrefs
     (use-bare-pointers-for-kernels). */
  bool useBarePointersForKernels;
} EtCopyPipelineOptions;

/* The defaults: the whole job (placement, transfer optimisation with
   uploads grouped up to 1 MiB, planning with function-owned arenas, async
   and batched copies, pinned host buffers of transfers), no skip flag, no
   CUDA graphs, kernels with full memref descriptors. */
MLIR_CAPI_EXPORTED EtCopyPipelineOptions etcopyPipelineOptionsGetDefault(void);

/* Parses the textual form of --etcopy-to-cuda's options
   ("skip-h2d-for-method-inputs=true arena-ownership=caller") into
   `*options`, leaving options the text does not mention as they are. On
   failure `*options` is unchanged and `callback` (unless NULL) receives the
   reason in one call, one line: an unknown option with the nearest valid
   one and the list of valid ones, options separated by commas instead of
   spaces, a bad value naming its option. `*options` itself must be valid
   (see etcopyBuildToCUDAPipeline). */
MLIR_CAPI_EXPORTED MlirLogicalResult etcopyPipelineOptionsParse(
    MlirStringRef text, EtCopyPipelineOptions *options,
    MlirStringCallback callback, void *userData);

/* Appends the stages of --etcopy-to-cuda / --etcopy-to-host, with
   `options` (NULL: the defaults), to `passManager`, which must run on
   builtin.module or on any op (as mlirPassManagerCreate's does). Fails,
   appending nothing and giving `callback` (unless NULL) the reason in one
   call, when it runs on another op, when `arenaOwnership` or
   `kernelFormat` is not one of its enumeration's values or when
   `kernelChip` is empty or not NUL-terminated. */
MLIR_CAPI_EXPORTED MlirLogicalResult etcopyBuildToCUDAPipeline(
    MlirOpPassManager passManager, const EtCopyPipelineOptions *options,
    MlirStringCallback callback, void *userData);
MLIR_CAPI_EXPORTED MlirLogicalResult etcopyBuildToHostPipeline(
    MlirOpPassManager passManager, const EtCopyPipelineOptions *options,
    MlirStringCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* ETCOPY_C_PIPELINES_H */
