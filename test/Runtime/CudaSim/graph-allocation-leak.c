// A graph allocation that a launch made and no free node frees outlives the
// graph: the CUDA Programming Guide ("Graph Memory Nodes") says "Graph
// destruction does not automatically free any live graph-allocated memory
// ... The allocation must subsequently be freed in another graph, or using
// cudaFreeAsync()/cudaFree()". A program that destroys such a graph and
// never frees the memory leaks it, and the leak check at exit says so. An
// allocation of a graph that was never launched was never live: it goes
// with the graph (`unlaunched`), as is one of a graph whose only launch
// failed (`failed-launch`: a node reads pinned memory freed since the
// capture).

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: not %t launched 2>&1 | FileCheck %s
// RUN: %t unlaunched 2>&1 | FileCheck %s --check-prefix=UNLAUNCHED \
// RUN:   --implicit-check-not=etcopy-cuda-sim
// RUN: %t failed-launch 2>&1 | FileCheck %s --check-prefix=FAILED \
// RUN:   --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *Mode = argc > 1 ? argv[1] : "";
  cudaStream_t S;
  void *Memory = NULL, *Pinned = NULL;
  cudaGraph_t G;
  cudaGraphExec_t GE;
  if (cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMallocHost(&Pinned, 128) != cudaSuccess ||
      cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal) != cudaSuccess ||
      cudaMallocAsync(&Memory, 128, S) != cudaSuccess ||
      cudaMemcpyAsync(Memory, Pinned, 128, cudaMemcpyHostToDevice, S) !=
          cudaSuccess ||
      cudaStreamEndCapture(S, &G) != cudaSuccess ||
      cudaGraphInstantiate(&GE, G, 0) != cudaSuccess)
    return 2;
  if (strcmp(Mode, "failed-launch") == 0) {
    cudaFreeHost(Pinned);
    Pinned = NULL;
    printf("launch: %s\n", cudaGetErrorName(cudaGraphLaunch(GE, S)));
  }
  if (strcmp(Mode, "launched") == 0 &&
      (cudaGraphLaunch(GE, S) != cudaSuccess ||
       cudaStreamSynchronize(S) != cudaSuccess))
    return 3;
  if (Pinned)
    cudaFreeHost(Pinned);
  if (cudaGraphExecDestroy(GE) != cudaSuccess ||
      cudaGraphDestroy(G) != cudaSuccess ||
      cudaStreamDestroy(S) != cudaSuccess)
    return 4;
  printf("memory=%p\n", Memory);
  printf("main done\n");
  return 0;
}
// CHECK: memory=0x[[MEMORY:[0-9a-f]+]]
// CHECK-NEXT: main done
// CHECK-NEXT: etcopy-cuda-sim: error: leak: 1 device allocation(s), 128 bytes, not freed at exit
// CHECK-NEXT: etcopy-cuda-sim: note: leaked 128 bytes of device memory at 0x[[MEMORY]] on cuda:0 (allocation #1, cudaMallocAsync)
// CHECK-NEXT: etcopy-cuda-sim: note: set ETCOPY_CUDA_SIM_LEAK_CHECK=0 to disable the leak check
// CHECK-NOT: {{.}}

// UNLAUNCHED: main done

// FAILED: etcopy-cuda-sim: error: cudaGraphLaunch:
// FAILED-NEXT: launch: cudaError
// FAILED: main done
