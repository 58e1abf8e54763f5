// Stream capture and graph launches: a capture records the stream's work
// without running it (its data stays untouched), each launch of the
// instance runs the recorded work again with the data of that moment, an
// allocation made in the capture keeps its address across launches, and a
// launch validates each node as the direct call does (a buffer freed since
// the capture is a use after free). A captured free of memory that no
// capture allocated fails and invalidates the capture. The statistics count
// one cudaGraphLaunch
// per launch and no copy call after the capture; the timing model charges
// one GRAPH_LAUNCH for the three nodes of each launch.

// RUN: %cc %s -I%cuda_sim_include -o %t -lpthread %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_STATS=1 %t 2>&1 | FileCheck %s --implicit-check-not="etcopy-cuda-sim: error"

#include "CudaRuntimeSubset.h"
#include "CudaSimModel.h"

#include <pthread.h>
#include <stdio.h>

static void show(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

/// What another thread does while the main thread captures.
static cudaStream_t Captured;
static void *endElsewhere(void *Unused) {
  (void)Unused;
  cudaGraph_t G;
  show("capture-thread end on another thread",
       cudaStreamEndCapture(Captured, &G));
  return NULL;
}
static void *mallocElsewhere(void *Unused) {
  (void)Unused;
  void *P = NULL;
  show("capture-thread malloc on another thread", cudaMalloc(&P, 16));
  if (P)
    cudaFree(P);
  return NULL;
}
static void runThread(void *(*Body)(void *)) {
  pthread_t Thread;
  pthread_create(&Thread, NULL, Body, NULL);
  pthread_join(Thread, NULL);
}

int main(void) {
  float *In = NULL, *Out = NULL, *Dev = NULL, *Gone = NULL;
  cudaStream_t S;
  if (cudaMallocHost((void **)&In, 4 * sizeof(float)) != cudaSuccess ||
      cudaMallocHost((void **)&Out, 4 * sizeof(float)) != cudaSuccess ||
      cudaMalloc((void **)&Dev, 4 * sizeof(float)) != cudaSuccess ||
      cudaMalloc((void **)&Gone, 4 * sizeof(float)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking) != cudaSuccess)
    return 2;
  for (int I = 0; I < 4; ++I)
    In[I] = Out[I] = 0;

  // In -> a buffer the graph allocates -> Dev -> Out.
  cudaGraph_t G;
  cudaGraphExec_t GE;
  float *Tmp = NULL;
  show("begin", cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
  show("malloc", cudaMallocAsync((void **)&Tmp, 4 * sizeof(float), S));
  show("upload", cudaMemcpyAsync(Tmp, In, 4 * sizeof(float),
                                 cudaMemcpyHostToDevice, S));
  show("move", cudaMemcpyAsync(Dev, Tmp, 4 * sizeof(float),
                               cudaMemcpyDeviceToDevice, S));
  show("free", cudaFreeAsync(Tmp, S));
  show("download", cudaMemcpyAsync(Out, Dev, 4 * sizeof(float),
                                   cudaMemcpyDeviceToHost, S));
  show("end", cudaStreamEndCapture(S, &G));
  show("instantiate", cudaGraphInstantiate(&GE, G, 0));
  // CHECK: begin -> cudaSuccess
  // CHECK-NEXT: malloc -> cudaSuccess
  // CHECK-NEXT: upload -> cudaSuccess
  // CHECK-NEXT: move -> cudaSuccess
  // CHECK-NEXT: free -> cudaSuccess
  // CHECK-NEXT: download -> cudaSuccess
  // CHECK-NEXT: end -> cudaSuccess
  // CHECK-NEXT: instantiate -> cudaSuccess
  cudaStreamSynchronize(S);
  printf("after capture: %g\n", Out[0]);
  // CHECK-NEXT: after capture: 0

  for (int Launch = 1; Launch <= 3; ++Launch) {
    for (int I = 0; I < 4; ++I)
      In[I] = (float)(10 * Launch + I);
    cudaError_t Status = cudaGraphLaunch(GE, S);
    cudaError_t Synced = cudaStreamSynchronize(S);
    printf("launch %d: %s %s %g %g\n", Launch, cudaGetErrorName(Status),
           cudaGetErrorName(Synced), Out[0], Out[3]);
  }
  // CHECK-NEXT: launch 1: cudaSuccess cudaSuccess 10 13
  // CHECK-NEXT: launch 2: cudaSuccess cudaSuccess 20 23
  // CHECK-NEXT: launch 3: cudaSuccess cudaSuccess 30 33

  // The host pays GRAPH_LAUNCH (2450 ns by default) for the whole graph,
  // not a launch per node; the device runs the three nodes.
  unsigned long long Before = etcopy_cuda_sim_modelled_time_ns();
  cudaGraphLaunch(GE, S);
  printf("graph launch host ns: %llu\n",
         etcopy_cuda_sim_modelled_time_ns() - Before);
  cudaStreamSynchronize(S);
  // CHECK-NEXT: graph launch host ns: 2450

  // A node whose memory was freed after the capture fails at the launch.
  cudaGraph_t G2;
  cudaGraphExec_t GE2;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(Dev, Gone, 4 * sizeof(float), cudaMemcpyDeviceToDevice, S);
  cudaStreamEndCapture(S, &G2);
  cudaGraphInstantiate(&GE2, G2, 0);
  cudaFree(Gone);
  show("launch after free", cudaGraphLaunch(GE2, S));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaGraphLaunch: {{.*}}freed{{.*}}
  // CHECK-NEXT: launch after free -> cudaErrorInvalidValue

  // A free node takes a graph allocation only: a captured cudaFreeAsync of
  // memory allocated outside the capture fails and invalidates the capture.
  // The memory is still live: it is freed once, after the capture.
  cudaGraph_t G3 = NULL;
  void *Outside = NULL;
  cudaMallocAsync(&Outside, 64, S);
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  show("free node of outside memory", cudaFreeAsync(Outside, S));
  show("end after it", cudaStreamEndCapture(S, &G3));
  show("free outside memory after the capture", cudaFreeAsync(Outside, S));
  cudaStreamSynchronize(S);
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaFreeAsync: invalid pointer: 0x{{[0-9a-f]+}} is not a graph allocation (it is from cudaMallocAsync, not from cudaMallocAsync or cudaMallocFromPoolAsync in a capture), and S{{[0-9]+}} is capturing a graph, where cudaFreeAsync makes a free node; the capture is invalidated
  // CHECK-NEXT: free node of outside memory -> cudaErrorInvalidValue
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: end after it -> cudaErrorStreamCaptureInvalidated
  // CHECK-NEXT: free outside memory after the capture -> cudaSuccess

  // capture-thread: a capture not begun in relaxed mode is ended on its
  // thread; a thread-local capture leaves other threads' unsafe calls
  // alone, a global one forbids them.
  cudaGraph_t G4;
  Captured = S;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeThreadLocal);
  runThread(endElsewhere);
  runThread(mallocElsewhere);
  show("capture-thread end", cudaStreamEndCapture(S, &G4));
  cudaGraphDestroy(G4);
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  runThread(mallocElsewhere);
  show("capture-thread global end", cudaStreamEndCapture(S, &G4));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} began on another thread, not in cudaStreamCaptureModeRelaxed
  // CHECK-NEXT: capture-thread end on another thread -> cudaErrorStreamCaptureWrongThread
  // CHECK-NEXT: capture-thread malloc on another thread -> cudaSuccess
  // CHECK-NEXT: capture-thread end -> cudaSuccess
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaMalloc: a potentially unsafe call (it may synchronise implicitly) while S{{[0-9]+}} captures a graph in cudaStreamCaptureModeGlobal mode; the capture is invalidated
  // CHECK-NEXT: capture-thread malloc on another thread -> cudaErrorStreamCaptureUnsupported
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamEndCapture: the capture of S{{[0-9]+}} was invalidated by an earlier call; no graph is returned
  // CHECK-NEXT: capture-thread global end -> cudaErrorStreamCaptureInvalidated

  cudaGraphExecDestroy(GE2);
  cudaGraphDestroy(G2);
  cudaGraphExecDestroy(GE);
  cudaGraphDestroy(G);
  cudaStreamDestroy(S);
  cudaFree(Dev);
  cudaFreeHost(In);
  cudaFreeHost(Out);
  printf("done\n");
  // CHECK-NEXT: done
  // The three copies ran four times, from one cudaMemcpyAsync call each
  // (the fourth call is the capture of the second graph); five launches.
  // CHECK: etcopy-cuda-sim: stats: streams_created=1 streams_destroyed=1 syncs=6 copies=12 {{.*}}
  // CHECK: entry-points: {{.*}} cudaMemcpyAsync=4 {{.*}} cudaGraphLaunch=5 
  return 0;
}
