// cudaStreamWaitEvent orders work across streams: synchronising the waiting
// stream runs the other stream up to the recorded event, and no further.
// Without the wait the second stream reads stale device memory.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t 2>&1 | FileCheck %s --implicit-check-not=etcopy-cuda-sim

#include "CudaRuntimeSubset.h"

#include <stdio.h>

#include "Inputs/check-cuda.h"

int main(void) {
  int In[2] = {1, 2}, Later[2] = {5, 6}, Out[2] = {0, 0};
  int *Dev = NULL;
  cudaStream_t Producer, Consumer;
  cudaEvent_t Ready;
  CHECK_CUDA(cudaMalloc((void **)&Dev, sizeof(In)));
  CHECK_CUDA(cudaMemset(Dev, 0, sizeof(In)));
  // cudaMemset may return before the device has set the memory, and
  // non-blocking streams are not ordered after the legacy stream it runs on:
  // wait for it.
  CHECK_CUDA(cudaStreamSynchronize(0));
  CHECK_CUDA(cudaStreamCreateWithFlags(&Producer, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&Consumer, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&Ready, cudaEventDisableTiming));

  // Ordered: producer copy, record, consumer waits, consumer copy.
  CHECK_CUDA(cudaMemcpyAsync(Dev, In, sizeof(In), cudaMemcpyHostToDevice,
                             Producer));
  CHECK_CUDA(cudaEventRecord(Ready, Producer));
  // Work after the record is not covered by the event.
  CHECK_CUDA(cudaMemcpyAsync(Dev, Later, sizeof(Later),
                             cudaMemcpyHostToDevice, Producer));
  CHECK_CUDA(cudaStreamWaitEvent(Consumer, Ready, 0));
  CHECK_CUDA(cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost,
                             Consumer));
  printf("event query: %s\n", cudaGetErrorName(cudaEventQuery(Ready)));
  // CHECK: event query: cudaErrorNotReady
  CHECK_CUDA(cudaStreamSynchronize(Consumer));
  printf("ordered: %d %d\n", Out[0], Out[1]);
  // CHECK-NEXT: ordered: 1 2
  printf("event query: %s\n", cudaGetErrorName(cudaEventQuery(Ready)));
  // CHECK-NEXT: event query: cudaSuccess
  printf("producer query: %s\n", cudaGetErrorName(cudaStreamQuery(Producer)));
  // CHECK-NEXT: producer query: cudaErrorNotReady
  CHECK_CUDA(cudaStreamSynchronize(Producer));

  // Unordered: the consumer does not wait, so synchronising it alone reads
  // the device memory as it was before the producer's copy.
  In[0] = 7;
  In[1] = 8;
  CHECK_CUDA(cudaMemcpyAsync(Dev, In, sizeof(In), cudaMemcpyHostToDevice,
                             Producer));
  CHECK_CUDA(cudaMemcpyAsync(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost,
                             Consumer));
  CHECK_CUDA(cudaStreamSynchronize(Consumer));
  printf("unordered: %d %d\n", Out[0], Out[1]);
  // CHECK-NEXT: unordered: 5 6

  // cudaEventSynchronize runs the recording stream up to the event.
  CHECK_CUDA(cudaEventRecord(Ready, Producer));
  CHECK_CUDA(cudaEventSynchronize(Ready));
  CHECK_CUDA(cudaMemcpy(Out, Dev, sizeof(Out), cudaMemcpyDeviceToHost));
  printf("after event sync: %d %d\n", Out[0], Out[1]);
  // CHECK-NEXT: after event sync: 7 8

  // An event that was never recorded is complete.
  cudaEvent_t Idle;
  CHECK_CUDA(cudaEventCreate(&Idle));
  printf("idle query: %s\n", cudaGetErrorName(cudaEventQuery(Idle)));
  // CHECK-NEXT: idle query: cudaSuccess
  CHECK_CUDA(cudaStreamWaitEvent(Consumer, Idle, 0));

  CHECK_CUDA(cudaEventDestroy(Idle));
  CHECK_CUDA(cudaEventDestroy(Ready));
  CHECK_CUDA(cudaStreamDestroy(Producer));
  CHECK_CUDA(cudaStreamDestroy(Consumer));
  CHECK_CUDA(cudaFree(Dev));
  return 0;
}
