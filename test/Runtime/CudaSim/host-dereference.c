// Host code that dereferences device memory is stopped by the fault handler
// with a message naming the allocation, and the process exits with status 1.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: not %t live 2>&1 | FileCheck %s --check-prefix=LIVE
// RUN: not %t freed 2>&1 | FileCheck %s --check-prefix=FREED
// RUN: not %t managed 2>&1 | FileCheck %s --check-prefix=MANAGED
// RUN: not %t write 2>&1 | FileCheck %s --check-prefix=WRITE
// RUN: not %t gap 2>&1 | FileCheck %s --check-prefix=GAP
// RUN: not --crash %t host 2>&1 | FileCheck %s --check-prefix=HOST

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int Argc, char **Argv) {
  if (Argc != 2)
    return 2;
  int *Dev = NULL;
  if (cudaMalloc((void **)&Dev, 64) != cudaSuccess)
    return 2;
  // Messages from the fault handler do not flush stdout; use stderr.
  fprintf(stderr, "dereferencing %s\n", Argv[1]);
  if (!strcmp(Argv[1], "live"))
    return ((volatile int *)Dev)[2];
  // LIVE: dereferencing live
  // LIVE-NEXT: etcopy-cuda-sim: error: host code dereferenced device pointer 0x{{[0-9a-f]+}} (offset 8 in a 64-byte allocation on cuda:0)
  // LIVE-NEXT: etcopy-cuda-sim: note: device memory is not accessible from the host; copy it with cudaMemcpy or cudaMemcpyAsync
  // LIVE-NOT: {{.}}

  if (!strcmp(Argv[1], "write")) {
    ((volatile char *)Dev)[70] = 1;
    return 0;
  }
  // WRITE: etcopy-cuda-sim: error: host code dereferenced device pointer 0x{{[0-9a-f]+}} (offset 70, past the end of a 64-byte allocation on cuda:0)

  if (!strcmp(Argv[1], "gap")) {
    // Beyond the allocation's page and guard page nothing is allocated yet.
    long Page = sysconf(_SC_PAGESIZE);
    return ((volatile char *)Dev)[4 * Page];
  }
  // GAP: etcopy-cuda-sim: error: host code dereferenced pointer 0x{{[0-9a-f]+}}, which lies in the simulator's device address space but belongs to no allocation

  if (!strcmp(Argv[1], "freed")) {
    if (cudaFree(Dev) != cudaSuccess)
      return 2;
    return ((volatile int *)Dev)[0];
  }
  // FREED: dereferencing freed
  // FREED-NEXT: etcopy-cuda-sim: error: host code dereferenced device pointer 0x{{[0-9a-f]+}} (offset 0 in a freed device allocation of 64 bytes on cuda:0)
  // FREED-NOT: note

  if (!strcmp(Argv[1], "managed")) {
    // Managed memory is host-accessible until it is freed, and running off
    // its end (past the page) hits a guard page.
    char *Managed = NULL;
    if (cudaMallocManaged((void **)&Managed, 16, cudaMemAttachGlobal) !=
        cudaSuccess)
      return 2;
    Managed[15] = 'x';
    fprintf(stderr, "managed ok %c\n", Managed[15]);
    long Page = sysconf(_SC_PAGESIZE);
    return ((volatile char *)Managed)[Page];
  }
  // MANAGED: managed ok x
  // MANAGED-NEXT: etcopy-cuda-sim: error: host code dereferenced managed pointer 0x{{[0-9a-f]+}} (offset {{[0-9]+}}, past the end of a 16-byte managed allocation on cuda:0)

  // Faults elsewhere go to the previous handler (here: the default action).
  return *(volatile int *)16;
  // HOST: dereferencing host
  // HOST-NOT: etcopy-cuda-sim
}
