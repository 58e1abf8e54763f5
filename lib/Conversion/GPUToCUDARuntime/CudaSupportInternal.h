/*===- CudaSupportInternal.h - Helpers of the CUDA support --------*- C -*-===*\
|*                                                                            *|
|* What the files of the runtime support of convert-gpu-to-cuda-runtime       *|
|* (CudaSupport.c, CudaSupportTransfers.c, CudaSupportGraphs.c) share: the    *|
|* error helpers, the environment, the release at exit and the device         *|
|* switch, all defined in CudaSupport.c. The build compiles each file to      *|
|* LLVM IR, links them with llvm-link and internalizes everything but the     *|
|* public symbols of CudaSupport.h, so these functions are internal in the    *|
|* lowered code, as file-static functions of one C file would be; their       *|
|* names only have to be unique among the support's files.                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_CONVERSION_GPUTOCUDARUNTIME_CUDASUPPORTINTERNAL_H
#define ETCOPY_CONVERSION_GPUTOCUDARUNTIME_CUDASUPPORTINTERNAL_H

/* dprintf, dladdr, RTLD_DEFAULT */
#define _GNU_SOURCE

#include "CudaSupport.h"

#include <stdint.h>

/* Passes a function's ETCOPY_LOCATION parameters on. */
#define ETCOPY_AT file, line, column

/*===----------------------------------------------------------------------===*
 * Errors (CudaSupport.c)
 *===----------------------------------------------------------------------===*/

/* Hands a failed call to the policy. */
__attribute__((noinline, cold)) void report(int err, ETCOPY_LOCATION,
                                            const char *call, const char *what,
                                            uint64_t bytes);

/* Reports `err` unless it is cudaSuccess (or CUDA_SUCCESS); returns whether
 * the call succeeded. */
int check(int err, ETCOPY_LOCATION, const char *call, const char *what,
          uint64_t bytes);

/* Reports a copy whose two sides differ in size and exits. */
__attribute__((noinline, cold, noreturn)) void
report_size_mismatch(ETCOPY_LOCATION, const char *what, int64_t dim,
                     int64_t srcSize, int64_t dstSize);

/* The number of bytes the environment variable `name` gives (decimal), or
 * `fallback` when it is unset or not a number. */
uint64_t get_env_bytes(const char *name, uint64_t fallback);

/*===----------------------------------------------------------------------===*
 * Release at exit (CudaSupport.c)
 *===----------------------------------------------------------------------===*/

/* Registers `handler` to run at exit once per module (`*registered` is this
 * module's flag), when the module's code lies in a loaded object. */
void release_at_exit(char *registered, void (*handler)(void *));

/*===----------------------------------------------------------------------===*
 * Devices (CudaSupport.c)
 *===----------------------------------------------------------------------===*/

/* Makes `device` current unless it already is; returns whether it is. */
int select_device(int32_t device, ETCOPY_LOCATION, const char *what);

#endif
