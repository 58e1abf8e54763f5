// Exit teardown as libcudart does it: the first call registers an exit
// handler that runs the exit checks and leaves the runtime unloading. Exit
// handlers registered after the first call run before it, so what they
// release is released in time; handlers registered before the first call,
// and destructor functions, run after it: their calls fail with
// cudaErrorCudartUnloading (the driver functions with
// CUDA_ERROR_DEINITIALIZED), and the leak check has already reported what
// they meant to free. A dlopen'ed simulator runs the same checks when it is
// dlclose'd.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t in-time 2>&1 | FileCheck %s --check-prefix=IN-TIME
// RUN: not %t late-free 2>&1 | FileCheck %s --check-prefix=LATE-FREE
// RUN: %t late-calls 2>&1 | FileCheck %s --check-prefix=LATE-CALLS
// RUN: not %t destructor 2>&1 | FileCheck %s --check-prefix=DESTRUCTOR
// RUN: %cc %s -DDLOPEN -I%cuda_sim_include -o %t.dlopen -ldl
// RUN: not %t.dlopen %etcopy_cuda_sim 2>&1 | FileCheck %s --check-prefix=DLCLOSE

#include "CudaRuntimeSubset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DLOPEN
#include <dlfcn.h>

// A dlopen'ed simulator: its exit handler belongs to the library, so it
// runs when the library is unloaded, at dlclose or, for a library linked
// with -z nodelete (as LLVM's build links every shared library), at exit.
// Either way the memory still allocated is reported and the process fails.
int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *Library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!Library)
    return 2;
  cudaError_t (*Malloc)(void **, size_t) =
      (cudaError_t(*)(void **, size_t))dlsym(Library, "cudaMalloc");
  void *Dev = NULL;
  if (!Malloc || Malloc(&Dev, 32) != cudaSuccess)
    return 2;
  printf("dlclose\n");
  dlclose(Library);
  printf("after dlclose\n");
  return 0;
}
// DLCLOSE: dlclose
// DLCLOSE: etcopy-cuda-sim: error: leak: 1 device allocation(s), 32 bytes, not freed at exit

#else

static void *Dev, *Pinned;
static cudaStream_t Stream;
static cudaEvent_t Event;
static PFN_cuMemsetD32Async_v3020 MemsetD32;

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

// Registered after the first CUDA call: runs before the simulator's exit
// handler, with the runtime alive.
static void releaseInTime(void) {
  printf("exit handler\n");
  report("cudaFree", cudaFree(Dev));
  report("cudaFreeHost", cudaFreeHost(Pinned));
  report("cudaStreamDestroy", cudaStreamDestroy(Stream));
}

// Registered before the first CUDA call: runs after the simulator's exit
// handler, like a static destructor.
static int LateFree;
static void releaseTooLate(void) {
  if (!LateFree)
    return;
  printf("late exit handler\n");
  report("cudaFree", cudaFree(Dev));
}

// A destructor function runs after every exit handler.
static int LateCalls;
__attribute__((destructor)) static void destructor(void) {
  if (!LateCalls)
    return;
  printf("destructor\n");
  report("cudaStreamDestroy", cudaStreamDestroy(Stream));
  report("cudaEventDestroy", cudaEventDestroy(Event));
  void *More = NULL;
  report("cudaMalloc", cudaMalloc(&More, 16));
  int Count = 0;
  report("cudaGetDeviceCount", cudaGetDeviceCount(&Count));
  printf("cuMemsetD32Async -> %d\n", (int)MemsetD32((CUdeviceptr)Dev, 0, 1,
                                                    (CUstream)Stream));
  report("cudaGetLastError", cudaGetLastError());
  report("cudaPeekAtLastError", cudaPeekAtLastError());
}

// What a program keeps across calls (a stream, a cached pinned block),
// released from a destructor function, as the lowered code's runtime support
// did before it registered an exit handler: too late.
static int ReleaseInDestructor;
__attribute__((destructor)) static void releaseInDestructor(void) {
  if (!ReleaseInDestructor)
    return;
  printf("releasing destructor\n");
  report("cudaFreeHost", cudaFreeHost(Pinned));
  report("cudaStreamDestroy", cudaStreamDestroy(Stream));
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  const char *Mode = argv[1];
  atexit(releaseTooLate);
  if (cudaMalloc(&Dev, 64) != cudaSuccess ||
      cudaMallocHost(&Pinned, 16) != cudaSuccess ||
      cudaStreamCreate(&Stream) != cudaSuccess ||
      cudaEventCreate(&Event) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuMemsetD32Async", (void **)&MemsetD32,
                                       13000, cudaEnableDefault,
                                       NULL) != cudaSuccess)
    return 2;
  if (!strcmp(Mode, "in-time")) {
    atexit(releaseInTime);
    report("cudaEventDestroy", cudaEventDestroy(Event));
  } else if (!strcmp(Mode, "late-free")) {
    LateFree = 1;
  } else if (!strcmp(Mode, "late-calls")) {
    report("cudaFree", cudaFree(Dev));
    report("cudaFreeHost", cudaFreeHost(Pinned));
    LateCalls = 1;
  } else if (!strcmp(Mode, "destructor")) {
    report("cudaFree", cudaFree(Dev));
    report("cudaEventDestroy", cudaEventDestroy(Event));
    ReleaseInDestructor = 1;
  }
  printf("main returns\n");
  return 0;
}

// IN-TIME: cudaEventDestroy -> cudaSuccess
// IN-TIME-NEXT: main returns
// IN-TIME-NEXT: exit handler
// IN-TIME-NEXT: cudaFree -> cudaSuccess
// IN-TIME-NEXT: cudaFreeHost -> cudaSuccess
// IN-TIME-NEXT: cudaStreamDestroy -> cudaSuccess
// IN-TIME-NOT: {{.}}

// The simulator's handler reports the memory the late handler means to
// free and fails the process before that handler runs.
// LATE-FREE: main returns
// LATE-FREE-NEXT: etcopy-cuda-sim: warning: leak: 1 stream(s) never destroyed: S1
// LATE-FREE-NEXT: etcopy-cuda-sim: warning: leak: 1 event(s) never destroyed: E1
// LATE-FREE-NEXT: etcopy-cuda-sim: error: leak: 1 device allocation(s), 64 bytes, not freed at exit
// LATE-FREE-NEXT: etcopy-cuda-sim: note: leaked 64 bytes of device memory at 0x{{[0-9a-f]+}} on cuda:0 (allocation #1, cudaMalloc)
// LATE-FREE-NEXT: etcopy-cuda-sim: error: leak: 1 pinned host allocation(s), 16 bytes, not freed at exit
// LATE-FREE: etcopy-cuda-sim: note: set ETCOPY_CUDA_SIM_LEAK_CHECK=0 to disable the leak check
// LATE-FREE-NOT: late exit handler

// Without leaked memory the process goes on: the late calls fail, none
// crashes, and the exit status stays 0.
// LATE-CALLS: main returns
// LATE-CALLS-NEXT: etcopy-cuda-sim: warning: leak: 1 stream(s) never destroyed: S1
// LATE-CALLS-NEXT: etcopy-cuda-sim: warning: leak: 1 event(s) never destroyed: E1
// LATE-CALLS-NEXT: destructor
// LATE-CALLS-NEXT: etcopy-cuda-sim: error: cudaStreamDestroy: the CUDA runtime is unloading: the call came after the simulator's exit handler (registered at its first call, as libcudart does); release CUDA resources from an exit handler registered after the first CUDA call, not from a static destructor (cudaErrorCudartUnloading)
// LATE-CALLS-NEXT: cudaStreamDestroy -> cudaErrorCudartUnloading
// LATE-CALLS-NEXT: etcopy-cuda-sim: error: cudaEventDestroy: the CUDA runtime is unloading
// LATE-CALLS-NEXT: cudaEventDestroy -> cudaErrorCudartUnloading
// LATE-CALLS-NEXT: etcopy-cuda-sim: error: cudaMalloc: the CUDA runtime is unloading
// LATE-CALLS-NEXT: cudaMalloc -> cudaErrorCudartUnloading
// LATE-CALLS-NEXT: etcopy-cuda-sim: error: cudaGetDeviceCount: the CUDA runtime is unloading
// LATE-CALLS-NEXT: cudaGetDeviceCount -> cudaErrorCudartUnloading
// LATE-CALLS-NEXT: etcopy-cuda-sim: error: cuMemsetD32Async: the CUDA runtime is unloading: {{.*}} (CUDA_ERROR_DEINITIALIZED)
// LATE-CALLS-NEXT: cuMemsetD32Async -> 4
// LATE-CALLS-NEXT: cudaGetLastError -> cudaErrorCudartUnloading
// LATE-CALLS-NEXT: cudaPeekAtLastError -> cudaErrorCudartUnloading
// LATE-CALLS-NOT: {{.}}

// The simulator's handler reports the kept stream and pinned block, as
// compute-sanitizer's leak check did on an H200, and fails the process
// before the destructor runs.
// DESTRUCTOR: main returns
// DESTRUCTOR-NEXT: etcopy-cuda-sim: warning: leak: 1 stream(s) never destroyed: S1
// DESTRUCTOR-NEXT: etcopy-cuda-sim: error: leak: 1 pinned host allocation(s), 16 bytes, not freed at exit
// DESTRUCTOR-NEXT: etcopy-cuda-sim: note: leaked 16 bytes of pinned host memory at 0x{{[0-9a-f]+}} (cudaMallocHost)
// DESTRUCTOR-NEXT: etcopy-cuda-sim: note: set ETCOPY_CUDA_SIM_LEAK_CHECK=0 to disable the leak check
// DESTRUCTOR-NOT: {{.}}

#endif
