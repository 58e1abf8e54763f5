/*===- CudaSimKernels.h - Host kernels handed to the CUDA simulator -*- C -*-===*\
|*                                                                            *|
|* The simulator cannot run device code; it runs the host versions of the     *|
|* kernels that convert-gpu-to-cuda-runtime compiles beside each image        *|
|* (docs/CudaSimulator.md, "Kernels"). This header is the contract between    *|
|* the lowered code's runtime support (CudaSupport.c) and libetcopy_cuda_sim: *|
|* the layout of a table of host kernels and the function that attaches one  *|
|* to a library loaded with cudaLibraryLoadData.                              *|
|*                                                                            *|
|* The table travels beside the image, never inside or after it: the image   *|
|* that cudaLibraryLoadData gets is exactly the object, and the simulator     *|
|* reads no byte of it beyond what its format bounds. The runtime support     *|
|* looks the function up with dlsym(RTLD_DEFAULT, ...) after each load that   *|
|* has a table; against the real libcudart there is no such symbol, so        *|
|* nothing is attached and the CUDA Runtime sees only its own API.            *|
|*                                                                            *|
|* Include it after the CUDA Runtime declarations (cuda_runtime_api.h or      *|
|* CudaRuntimeSubset.h).                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_RUNTIME_CUDASIM_CUDASIMKERNELS_H
#define ETCOPY_RUNTIME_CUDASIM_CUDASIMKERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first 8 bytes of every table (no NUL): the simulator rejects a table
 * without them, so that a pointer to anything else is not taken for one. */
#define ETCOPY_HOST_KERNEL_TABLE_MAGIC "ETCHOSTK"

/* The name under which libetcopy_cuda_sim exports
 * etcopy_cuda_sim_attach_host_kernels, for dlsym. */
#define ETCOPY_CUDA_SIM_ATTACH_HOST_KERNELS "etcopy_cuda_sim_attach_host_kernels"

/* One kernel of a library. `entry` runs one thread: `args` holds one pointer
 * per kernel parameter (as cudaLaunchKernel's), `ids` the block id, thread
 * id, block size and grid size (x, y, z each). A kernel without host
 * version has a null `entry` and `kinds`, and `unsupported` says why. */
typedef struct etcopy_host_kernel {
  const char *name;
  /* One character per parameter: 'p' for a pointer, else the value's byte
   * size ('1' to '9'). */
  const char *kinds;
  void (*entry)(void **args, const uint64_t ids[12]);
  const char *unsupported;
} etcopy_host_kernel;

/* The host kernels of one library (KernelLowering.cpp lays it out). */
typedef struct etcopy_host_kernel_table {
  char magic[8]; /* ETCOPY_HOST_KERNEL_TABLE_MAGIC */
  uint64_t count;
  etcopy_host_kernel kernels[];
} etcopy_host_kernel_table;

/* Gives `library`, just loaded by cudaLibraryLoadData, the host versions of
 * its kernels, which cudaLibraryGetKernel then finds by name. The table
 * must outlive the library. Fails with cudaErrorInvalidResourceHandle for a
 * handle that is not a loaded library, cudaErrorInvalidValue for a null
 * table, one without the magic, or a library that has a table already. It
 * is not a CUDA call: the trace shows it, but it is not counted, injected
 * with faults or charged time, and it leaves the last error alone. */
typedef cudaError_t (*etcopy_cuda_sim_attach_host_kernels_fn)(
    cudaLibrary_t library, const etcopy_host_kernel_table *table);
cudaError_t etcopy_cuda_sim_attach_host_kernels(
    cudaLibrary_t library, const etcopy_host_kernel_table *table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ETCOPY_RUNTIME_CUDASIM_CUDASIMKERNELS_H */
