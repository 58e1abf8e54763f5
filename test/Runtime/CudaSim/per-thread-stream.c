// cudaStreamPerThread is each host thread's own stream on each device, not
// the legacy default stream: CUDA's "Stream synchronization behavior" page
// says that "the per-thread default stream is not a non-blocking stream and
// will synchronize with the legacy default stream if both are used in a
// program". So it waits for the legacy stream and the legacy stream waits
// for it, but it waits for no other stream (a blocking stream the program
// created, another thread's per-thread stream), and a non-blocking stream
// does not wait for it. The simulator used to treat it as the legacy
// stream, which waits for every blocking stream: a program that relied on
// that ordering passed there and not on a GPU.
//
// Each case queues a memset and asks cudaStreamQuery whether a stream still
// has work; the simulator runs queued work only when a synchronisation
// needs it, so a stream that was not waited for still has its memset.

// RUN: %cc %s -I%cuda_sim_include -o %t -lpthread %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"

#include <pthread.h>
#include <stdio.h>

#include "Inputs/check-cuda.h"

static int *Dev;

static const char *state(cudaError_t Error) {
  return Error == cudaSuccess         ? "idle"
         : Error == cudaErrorNotReady ? "busy"
                                      : cudaGetErrorName(Error);
}

static void *otherThread(void *Unused) {
  (void)Unused;
  // This thread's per-thread stream is not the main thread's.
  printf("other thread's stream: %s\n",
         state(cudaStreamQuery(cudaStreamPerThread)));
  printf("other thread's synchronize: %s\n",
         cudaGetErrorName(cudaStreamSynchronize(cudaStreamPerThread)));
  return NULL;
}

int main(void) {
  cudaStream_t Blocking, NonBlocking;
  CHECK_CUDA(cudaMalloc((void **)&Dev, 64));
  CHECK_CUDA(cudaStreamCreate(&Blocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&NonBlocking, cudaStreamNonBlocking));

  // Another thread's per-thread stream neither holds this thread's work
  // nor runs it.
  CHECK_CUDA(cudaMemsetAsync(Dev, 1, 64, cudaStreamPerThread));
  pthread_t Thread;
  if (pthread_create(&Thread, NULL, otherThread, NULL) != 0)
    return 2;
  pthread_join(Thread, NULL);
  printf("after the other thread: %s\n",
         state(cudaStreamQuery(cudaStreamPerThread)));
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  // CHECK: other thread's stream: idle
  // CHECK-NEXT: other thread's synchronize: cudaSuccess
  // CHECK-NEXT: after the other thread: busy

  // It does not wait for a blocking stream the program created.
  CHECK_CUDA(cudaMemsetAsync(Dev, 2, 64, Blocking));
  CHECK_CUDA(cudaMemsetAsync(Dev, 3, 64, cudaStreamPerThread));
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  printf("blocking stream after the per-thread stream: %s\n",
         state(cudaStreamQuery(Blocking)));
  CHECK_CUDA(cudaStreamSynchronize(Blocking));
  // CHECK-NEXT: blocking stream after the per-thread stream: busy

  // It waits for the legacy stream, which waits for it.
  CHECK_CUDA(cudaMemsetAsync(Dev, 4, 64, 0));
  CHECK_CUDA(cudaMemsetAsync(Dev, 5, 64, cudaStreamPerThread));
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  printf("legacy stream after the per-thread stream: %s\n",
         state(cudaStreamQuery(0)));
  CHECK_CUDA(cudaMemsetAsync(Dev, 6, 64, cudaStreamPerThread));
  CHECK_CUDA(cudaMemsetAsync(Dev, 7, 64, 0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  printf("per-thread stream after the legacy stream: %s\n",
         state(cudaStreamQuery(cudaStreamPerThread)));
  // CHECK-NEXT: legacy stream after the per-thread stream: idle
  // CHECK-NEXT: per-thread stream after the legacy stream: idle

  // A non-blocking stream does not wait for it.
  CHECK_CUDA(cudaMemsetAsync(Dev, 8, 64, cudaStreamPerThread));
  CHECK_CUDA(cudaMemsetAsync(Dev, 9, 64, NonBlocking));
  CHECK_CUDA(cudaStreamSynchronize(NonBlocking));
  printf("per-thread stream after a non-blocking stream: %s\n",
         state(cudaStreamQuery(cudaStreamPerThread)));
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  // CHECK-NEXT: per-thread stream after a non-blocking stream: busy

  // It is not destroyed, and is no leak.
  printf("destroy: %s\n",
         cudaGetErrorName(cudaStreamDestroy(cudaStreamPerThread)));
  // CHECK-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: the default stream cannot be destroyed
  // CHECK-NEXT: destroy: cudaErrorInvalidResourceHandle

  CHECK_CUDA(cudaStreamDestroy(Blocking));
  CHECK_CUDA(cudaStreamDestroy(NonBlocking));
  CHECK_CUDA(cudaFree(Dev));
  printf("done\n");
  // CHECK-NEXT: done
  return 0;
}
