// Peer access: ETCOPY_CUDA_SIM_PEER_ACCESS says which pairs of devices can
// access each other (default: all pairs of distinct devices), and
// cudaDeviceEnablePeerAccess/cudaDeviceDisablePeerAccess switch it on and
// off with CUDA's error codes. Copies between devices work either way, as
// on a real system, but take the direct path only with peer access in
// either direction; otherwise they are staged through host memory.
// cudaMemcpyPeer needs device memory on the devices it names.

// RUN: %cc %s -I%cuda_sim_include -o %t %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: env ETCOPY_CUDA_SIM_DEVICES=3 ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s
// RUN: env ETCOPY_CUDA_SIM_DEVICES=3 ETCOPY_CUDA_SIM_PEER_ACCESS=none %t 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: env ETCOPY_CUDA_SIM_DEVICES=3 ETCOPY_CUDA_SIM_PEER_ACCESS=1-0,x,0-0,2-3, %t 2>&1 | FileCheck %s --check-prefix=PAIRS
// RUN: env ETCOPY_CUDA_SIM_DEVICES=3 ETCOPY_CUDA_SIM_FAIL=peer:7 %t 2>&1 | FileCheck %s --check-prefix=INJECT

#include "CudaRuntimeSubset.h"

#include <stdio.h>

static void report(const char *What, cudaError_t Status) {
  printf("%s -> %s\n", What, cudaGetErrorName(Status));
}

static void canAccess(int Device, int Peer) {
  int Can = -1;
  cudaError_t Status = cudaDeviceCanAccessPeer(&Can, Device, Peer);
  printf("can %d access %d: %d (%s)\n", Device, Peer, Can,
         cudaGetErrorName(Status));
}

int main(void) {
  canAccess(0, 1);
  canAccess(1, 0);
  canAccess(0, 2);
  canAccess(0, 0);
  // CHECK: trace: cudaDeviceCanAccessPeer(device=0, peerDevice=1) -> 1
  // CHECK-NEXT: can 0 access 1: 1 (cudaSuccess)
  // CHECK: can 1 access 0: 1 (cudaSuccess)
  // CHECK: can 0 access 2: 1 (cudaSuccess)
  // CHECK: can 0 access 0: 0 (cudaSuccess)
  // NONE: can 0 access 1: 0 (cudaSuccess)
  // NONE-NEXT: can 1 access 0: 0 (cudaSuccess)
  // NONE-NEXT: can 0 access 2: 0 (cudaSuccess)
  // PAIRS: warning: ignoring 'x' in ETCOPY_CUDA_SIM_PEER_ACCESS='1-0,x,0-0,2-3,': expected `all`, `none` or pairs A-B of distinct devices below 3
  // PAIRS-NEXT: warning: ignoring '0-0' in
  // PAIRS-NEXT: warning: ignoring '2-3' in
  // PAIRS-NEXT: can 0 access 1: 1 (cudaSuccess)
  // PAIRS-NEXT: can 1 access 0: 1 (cudaSuccess)
  // PAIRS-NEXT: can 0 access 2: 0 (cudaSuccess)

  int Can = 0;
  report("can access bad device", cudaDeviceCanAccessPeer(&Can, 3, 0));
  report("can access null", cudaDeviceCanAccessPeer(NULL, 0, 1));
  // CHECK: error: cudaDeviceCanAccessPeer: invalid device ordinal 3 for device (3 device(s) simulated)
  // CHECK: can access bad device -> cudaErrorInvalidDevice
  // CHECK: error: cudaDeviceCanAccessPeer: invalid argument: canAccessPeer is null
  // CHECK: can access null -> cudaErrorInvalidValue

  // Allocations on cuda:0 and cuda:1.
  int In[4] = {1, 2, 3, 4}, Out[4] = {0, 0, 0, 0};
  int *Dev0 = NULL, *Dev1 = NULL, *Pinned = NULL;
  cudaStream_t S0;
  if (cudaMalloc((void **)&Dev0, sizeof(In)) != cudaSuccess ||
      cudaMallocHost((void **)&Pinned, sizeof(In)) != cudaSuccess ||
      cudaStreamCreate(&S0) != cudaSuccess || cudaSetDevice(1) != cudaSuccess ||
      cudaMalloc((void **)&Dev1, sizeof(In)) != cudaSuccess ||
      cudaSetDevice(0) != cudaSuccess ||
      cudaMemcpy(Dev0, In, sizeof(In), cudaMemcpyHostToDevice) != cudaSuccess)
    return 1;

  // Without peer access the copy is staged, but it still happens.
  report("peer copy", cudaMemcpyPeer(Dev1, 1, Dev0, 0, sizeof(In)));
  cudaMemcpy(Out, Dev1, sizeof(Out), cudaMemcpyDeviceToHost);
  printf("out: %d %d %d %d\n", Out[0], Out[1], Out[2], Out[3]);
  // CHECK: trace: cudaMemcpyPeer(dst=0x[[DEV1:[0-9a-f]+]], dstDevice=1, src=0x[[DEV0:[0-9a-f]+]], srcDevice=0, 16 bytes) [peer_staged]
  // CHECK-NEXT: peer copy -> cudaSuccess
  // CHECK: out: 1 2 3 4
  // NONE: peer copy -> cudaSuccess
  // NONE: out: 1 2 3 4

  report("enable", cudaDeviceEnablePeerAccess(1, 0));
  report("enable again", cudaDeviceEnablePeerAccess(1, 0));
  report("enable self", cudaDeviceEnablePeerAccess(0, 0));
  report("enable bad device", cudaDeviceEnablePeerAccess(7, 0));
  report("enable flags", cudaDeviceEnablePeerAccess(2, 1));
  report("enable 2", cudaDeviceEnablePeerAccess(2, 0));
  // CHECK: trace: cudaDeviceEnablePeerAccess(peerDevice=1, flags=0, cuda:0)
  // CHECK-NEXT: enable -> cudaSuccess
  // CHECK-NEXT: error: cudaDeviceEnablePeerAccess: peer access from cuda:0 to cuda:1 is already enabled
  // CHECK-NEXT: trace: cudaDeviceEnablePeerAccess(peerDevice=1, flags=0, cuda:0) -> cudaErrorPeerAccessAlreadyEnabled
  // CHECK-NEXT: enable again -> cudaErrorPeerAccessAlreadyEnabled
  // CHECK-NEXT: error: cudaDeviceEnablePeerAccess: cuda:0 cannot enable peer access to itself
  // CHECK: enable self -> cudaErrorInvalidDevice
  // CHECK-NEXT: error: cudaDeviceEnablePeerAccess: invalid device ordinal 7 for peerDevice (3 device(s) simulated)
  // CHECK: enable bad device -> cudaErrorInvalidDevice
  // CHECK-NEXT: error: cudaDeviceEnablePeerAccess: invalid flags 0x1 (must be 0)
  // CHECK: enable flags -> cudaErrorInvalidValue
  // CHECK: enable 2 -> cudaSuccess
  // NONE: error: cudaDeviceEnablePeerAccess: cuda:0 cannot access cuda:1 (see ETCOPY_CUDA_SIM_PEER_ACCESS)
  // NONE-NEXT: enable -> cudaErrorInvalidDevice
  // A failed enable enables nothing: enabling again succeeds.
  // INJECT: error: cudaDeviceEnablePeerAccess: injected failure: peer call #7 fails with cudaErrorTooManyPeers because ETCOPY_CUDA_SIM_FAIL=peer:7
  // INJECT-NEXT: enable -> cudaErrorTooManyPeers
  // INJECT-NEXT: enable again -> cudaSuccess
  // PAIRS: enable -> cudaSuccess
  // PAIRS: error: cudaDeviceEnablePeerAccess: cuda:0 cannot access cuda:2 (see ETCOPY_CUDA_SIM_PEER_ACCESS)
  // PAIRS-NEXT: enable 2 -> cudaErrorInvalidDevice

  // Access enabled from cuda:0 to cuda:1 makes copies in both directions
  // direct, whichever call makes them.
  Out[0] = 0;
  report("peer copy back", cudaMemcpyPeerAsync(Dev0, 0, Dev1, 1, sizeof(In), S0));
  report("uva copy", cudaMemcpyAsync(Pinned, Dev1, sizeof(In), cudaMemcpyDefault, S0));
  cudaMemcpyAsync(Dev1, Dev0, sizeof(In), cudaMemcpyDeviceToDevice, S0);
  cudaMemcpy(Out, Dev0, sizeof(Out), cudaMemcpyDeviceToHost);
  printf("out: %d\n", Out[0]);
  // CHECK: trace: cudaMemcpyPeerAsync(dst=0x[[DEV0]], dstDevice=0, src=0x[[DEV1]], srcDevice=1, 16 bytes, stream=S1) [peer_direct]
  // CHECK-NEXT: peer copy back -> cudaSuccess
  // CHECK-NEXT: trace: cudaMemcpyAsync(dst=0x{{[0-9a-f]+}}, src=0x[[DEV1]], 16 bytes, Default, stream=S1) [d2h_pinned]
  // CHECK-NEXT: uva copy -> cudaSuccess
  // CHECK-NEXT: trace: cudaMemcpyAsync(dst=0x[[DEV1]], src=0x[[DEV0]], 16 bytes, DeviceToDevice, stream=S1) [peer_direct]
  // CHECK: out: 1

  // cudaMemcpyPeer checks the devices and where the memory is.
  report("wrong device", cudaMemcpyPeer(Dev1, 0, Dev0, 0, sizeof(In)));
  report("host memory", cudaMemcpyPeer(Dev1, 1, In, 0, sizeof(In)));
  report("pinned memory", cudaMemcpyPeer(Pinned, 0, Dev1, 1, sizeof(In)));
  report("bad ordinal", cudaMemcpyPeer(Dev1, 1, Dev0, 5, sizeof(In)));
  report("out of bounds", cudaMemcpyPeer(Dev1, 1, Dev0, 0, sizeof(In) + 1));
  report("empty", cudaMemcpyPeer(NULL, 1, NULL, 0, 0));
  report("same device", cudaMemcpyPeer(Dev0, 0, Dev0 + 2, 0, 8));
  report("bad stream", cudaMemcpyPeerAsync(Dev1, 1, Dev0, 0, 4, (cudaStream_t)0x99));
  // CHECK: error: cudaMemcpyPeer: invalid pointer: dst 0x[[DEV1]] is device memory on cuda:1, not on cuda:0 (dstDevice)
  // CHECK: wrong device -> cudaErrorInvalidValue
  // CHECK: error: cudaMemcpyPeer: invalid pointer: src 0x{{[0-9a-f]+}} is pageable host memory; cudaMemcpyPeer needs device memory on cuda:0 (srcDevice)
  // CHECK: host memory -> cudaErrorInvalidValue
  // CHECK: error: cudaMemcpyPeer: invalid pointer: dst 0x{{[0-9a-f]+}} is pinned host memory; cudaMemcpyPeer needs device memory on cuda:0 (dstDevice)
  // CHECK: pinned memory -> cudaErrorInvalidValue
  // CHECK: error: cudaMemcpyPeer: invalid device ordinal 5 for srcDevice (3 device(s) simulated)
  // CHECK: bad ordinal -> cudaErrorInvalidDevice
  // CHECK: error: cudaMemcpyPeer: out-of-bounds: dst 0x[[DEV1]] + 17 bytes (offset 0) exceeds the 16-byte device allocation 0x[[DEV1]] on cuda:1
  // CHECK: out of bounds -> cudaErrorInvalidValue
  // CHECK: error: cudaMemcpyPeer: empty copy: count is 0; the simulator rejects copies of 0 bytes (undocumented for cudaMemcpyPeer; cudaMemcpyBatchAsync rejects them)
  // CHECK: empty -> cudaErrorInvalidValue
  // CHECK: trace: cudaMemcpyPeer(dst=0x[[DEV0]], dstDevice=0, src=0x{{[0-9a-f]+}}, srcDevice=0, 8 bytes) [d2d]
  // CHECK-NEXT: same device -> cudaSuccess
  // CHECK: error: cudaMemcpyPeerAsync: invalid stream handle 0x99
  // CHECK: bad stream -> cudaErrorInvalidResourceHandle

  report("disable 1", cudaDeviceDisablePeerAccess(1));
  report("disable 1 again", cudaDeviceDisablePeerAccess(1));
  report("disable self", cudaDeviceDisablePeerAccess(0));
  report("disable bad device", cudaDeviceDisablePeerAccess(-1));
  // CHECK: trace: cudaDeviceDisablePeerAccess(peerDevice=1, cuda:0)
  // CHECK-NEXT: disable 1 -> cudaSuccess
  // CHECK-NEXT: error: cudaDeviceDisablePeerAccess: peer access from cuda:0 to cuda:1 is not enabled
  // CHECK: disable 1 again -> cudaErrorPeerAccessNotEnabled
  // CHECK-NEXT: error: cudaDeviceDisablePeerAccess: peer access from cuda:0 to cuda:0 is not enabled
  // CHECK: disable self -> cudaErrorPeerAccessNotEnabled
  // CHECK-NEXT: error: cudaDeviceDisablePeerAccess: invalid device ordinal -1 for peerDevice (3 device(s) simulated)
  // CHECK: disable bad device -> cudaErrorInvalidDevice

  // Resetting a device ends the peer access to and from it.
  cudaSetDevice(2);
  cudaDeviceReset();
  cudaSetDevice(0);
  report("disable 2 after reset", cudaDeviceDisablePeerAccess(2));
  // CHECK: disable 2 after reset -> cudaErrorPeerAccessNotEnabled

  cudaStreamSynchronize(S0);
  cudaStreamDestroy(S0);
  cudaFree(Dev0);
  cudaFree(Dev1);
  cudaFreeHost(Pinned);
  return 0;
}
// CHECK: stats: copies: {{.*}} d2d=1 d2d_bytes=8 peer_direct=2 peer_direct_bytes=32 peer_staged=1 peer_staged_bytes=16
// CHECK: stats: calls: {{.*}} peer=17
// CHECK: stats: entry-points: {{.*}} cudaMemcpyPeer=8 cudaMemcpyPeerAsync=2 {{.*}} cudaDeviceCanAccessPeer=6 cudaDeviceEnablePeerAccess=6 cudaDeviceDisablePeerAccess=5{{$}}
