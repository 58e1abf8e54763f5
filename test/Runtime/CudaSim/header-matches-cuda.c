// CudaRuntimeSubset.h agrees with CUDA 13's headers. Every source file of
// the simulator compiles against the subset (the build compiles them against
// the real header when the toolkit is found, so their definitions match
// both), and every constant and struct layout the subset defines has the
// real headers' value.

// RUN: %cxx -fsyntax-only -std=c++17 -fno-exceptions -Wall -Werror -I%cuda_sim_include %etcopy_src_root/lib/Runtime/CudaSim/*.cpp
// RUN: %cc %s -I%cuda_sim_include -o %t.subset
// RUN: %t.subset > %t.subset.txt
// RUN: FileCheck %s < %t.subset.txt
// RUN: %if cuda-toolkit %{ %cc %s -DUSE_CUDA_HEADERS -I%cudart_dir/../include -o %t.cuda %}
// RUN: %if cuda-toolkit %{ %t.cuda > %t.cuda.txt %}
// RUN: %if cuda-toolkit %{ diff %t.subset.txt %t.cuda.txt %}

#ifdef USE_CUDA_HEADERS
#include <cuda.h>
#include <cuda_runtime_api.h>
#else
#include "CudaRuntimeSubset.h"
#endif

#include <stddef.h>
#include <stdio.h>

#define VALUE(Name) printf("%s = %lld\n", #Name, (long long)(Name))
#define POINTER(Name) printf("%s = %p\n", #Name, (void *)(Name))
#define SIZE(Type) printf("sizeof(%s) = %zu\n", #Type, sizeof(Type))
#define OFFSET(Type, Field)                                                    \
  printf("offsetof(%s, %s) = %zu\n", #Type, #Field, offsetof(Type, Field))

int main(void) {
  VALUE(CUDART_VERSION);

  VALUE(cudaSuccess);
  VALUE(cudaErrorInvalidValue);
  VALUE(cudaErrorMemoryAllocation);
  VALUE(cudaErrorInitializationError);
  VALUE(cudaErrorCudartUnloading);
  VALUE(cudaErrorInvalidConfiguration);
  VALUE(cudaErrorInvalidPitchValue);
  VALUE(cudaErrorInvalidSymbol);
  VALUE(cudaErrorInvalidHostPointer);
  VALUE(cudaErrorInvalidDevicePointer);
  VALUE(cudaErrorInvalidMemcpyDirection);
  VALUE(cudaErrorDevicesUnavailable);
  VALUE(cudaErrorNotYetImplemented);
  VALUE(cudaErrorStubLibrary);
  VALUE(cudaErrorInsufficientDriver);
  VALUE(cudaErrorCallRequiresNewerDriver);
  VALUE(cudaErrorInvalidDeviceFunction);
  VALUE(cudaErrorNoDevice);
  VALUE(cudaErrorInvalidDevice);
  VALUE(cudaErrorStartupFailure);
  VALUE(cudaErrorInvalidKernelImage);
  VALUE(cudaErrorDeviceUninitialized);
  VALUE(cudaErrorInvalidResourceHandle);
  VALUE(cudaErrorIllegalState);
  VALUE(cudaErrorNotReady);
  VALUE(cudaErrorIllegalAddress);
  VALUE(cudaErrorLaunchOutOfResources);
  VALUE(cudaErrorLaunchTimeout);
  VALUE(cudaErrorPeerAccessAlreadyEnabled);
  VALUE(cudaErrorPeerAccessNotEnabled);
  VALUE(cudaErrorTooManyPeers);
  VALUE(cudaErrorHostMemoryAlreadyRegistered);
  VALUE(cudaErrorHostMemoryNotRegistered);
  VALUE(cudaErrorLaunchFailure);
  VALUE(cudaErrorNotPermitted);
  VALUE(cudaErrorNotSupported);
  VALUE(cudaErrorTimeout);
  VALUE(cudaErrorStreamCaptureUnsupported);
  VALUE(cudaErrorStreamCaptureInvalidated);
  VALUE(cudaErrorStreamCaptureWrongThread);
  VALUE(cudaStreamCaptureStatusNone);
  VALUE(cudaStreamCaptureStatusActive);
  VALUE(cudaStreamCaptureStatusInvalidated);
  VALUE(cudaStreamCaptureModeGlobal);
  VALUE(cudaStreamCaptureModeThreadLocal);
  VALUE(cudaStreamCaptureModeRelaxed);
  VALUE(cudaErrorUnknown);

  VALUE(cudaMemcpyHostToHost);
  VALUE(cudaMemcpyHostToDevice);
  VALUE(cudaMemcpyDeviceToHost);
  VALUE(cudaMemcpyDeviceToDevice);
  VALUE(cudaMemcpyDefault);
  VALUE(cudaMemoryTypeUnregistered);
  VALUE(cudaMemoryTypeHost);
  VALUE(cudaMemoryTypeDevice);
  VALUE(cudaMemoryTypeManaged);
  SIZE(struct cudaPointerAttributes);
  OFFSET(struct cudaPointerAttributes, type);
  OFFSET(struct cudaPointerAttributes, device);
  OFFSET(struct cudaPointerAttributes, devicePointer);
  OFFSET(struct cudaPointerAttributes, hostPointer);

  VALUE(cudaMemLocationTypeInvalid);
  VALUE(cudaMemLocationTypeNone);
  VALUE(cudaMemLocationTypeDevice);
  VALUE(cudaMemLocationTypeHost);
  VALUE(cudaMemLocationTypeHostNuma);
  VALUE(cudaMemLocationTypeHostNumaCurrent);
  SIZE(struct cudaMemLocation);
  OFFSET(struct cudaMemLocation, type);
  OFFSET(struct cudaMemLocation, id);
  VALUE(cudaMemcpyFlagDefault);
  VALUE(cudaMemcpyFlagPreferOverlapWithCompute);
  VALUE(cudaMemcpySrcAccessOrderInvalid);
  VALUE(cudaMemcpySrcAccessOrderStream);
  VALUE(cudaMemcpySrcAccessOrderDuringApiCall);
  VALUE(cudaMemcpySrcAccessOrderAny);
  VALUE(cudaMemcpySrcAccessOrderMax);
  SIZE(struct cudaMemcpyAttributes);
  OFFSET(struct cudaMemcpyAttributes, srcAccessOrder);
  OFFSET(struct cudaMemcpyAttributes, srcLocHint);
  OFFSET(struct cudaMemcpyAttributes, dstLocHint);
  OFFSET(struct cudaMemcpyAttributes, flags);

  VALUE(cudaMemPoolReuseFollowEventDependencies);
  VALUE(cudaMemPoolReuseAllowOpportunistic);
  VALUE(cudaMemPoolReuseAllowInternalDependencies);
  VALUE(cudaMemPoolAttrReleaseThreshold);
  VALUE(cudaMemPoolAttrReservedMemCurrent);
  VALUE(cudaMemPoolAttrReservedMemHigh);
  VALUE(cudaMemPoolAttrUsedMemCurrent);
  VALUE(cudaMemPoolAttrUsedMemHigh);
  VALUE(cudaMemAllocationTypeInvalid);
  VALUE(cudaMemAllocationTypePinned);
  VALUE(cudaMemAllocationTypeManaged);
  VALUE(cudaMemAllocationTypeMax);
  VALUE(cudaMemHandleTypeNone);
  VALUE(cudaMemHandleTypePosixFileDescriptor);
  VALUE(cudaMemHandleTypeWin32);
  VALUE(cudaMemHandleTypeWin32Kmt);
  VALUE(cudaMemHandleTypeFabric);
  VALUE(cudaMemPoolCreateUsageHwDecompress);
  SIZE(struct cudaMemPoolProps);
  OFFSET(struct cudaMemPoolProps, allocType);
  OFFSET(struct cudaMemPoolProps, handleTypes);
  OFFSET(struct cudaMemPoolProps, location);
  OFFSET(struct cudaMemPoolProps, win32SecurityAttributes);
  OFFSET(struct cudaMemPoolProps, maxSize);
  OFFSET(struct cudaMemPoolProps, usage);
  OFFSET(struct cudaMemPoolProps, reserved);

  VALUE(cudaHostAllocDefault);
  VALUE(cudaHostAllocPortable);
  VALUE(cudaHostAllocMapped);
  VALUE(cudaHostAllocWriteCombined);
  VALUE(cudaHostRegisterDefault);
  VALUE(cudaHostRegisterPortable);
  VALUE(cudaHostRegisterMapped);
  VALUE(cudaHostRegisterIoMemory);
  VALUE(cudaHostRegisterReadOnly);
  VALUE(cudaStreamDefault);
  VALUE(cudaStreamNonBlocking);
  POINTER(cudaStreamLegacy);
  POINTER(cudaStreamPerThread);
  VALUE(cudaEventDefault);
  VALUE(cudaEventBlockingSync);
  VALUE(cudaEventDisableTiming);
  VALUE(cudaEventInterprocess);
  VALUE(cudaEventWaitDefault);
  VALUE(cudaEventWaitExternal);
  VALUE(cudaMemAttachGlobal);
  VALUE(cudaMemAttachHost);
  VALUE(cudaCpuDeviceId);
  VALUE(cudaInvalidDeviceId);
  VALUE(cudaEnableDefault);
  VALUE(cudaEnableLegacyStream);
  VALUE(cudaEnablePerThreadDefaultStream);
  VALUE(cudaDriverEntryPointSuccess);
  VALUE(cudaDriverEntryPointSymbolNotFound);
  VALUE(cudaDriverEntryPointVersionNotSufficent);

  SIZE(CUdeviceptr);
  VALUE(CUDA_SUCCESS);
  VALUE(CUDA_ERROR_INVALID_VALUE);
  VALUE(CUDA_ERROR_DEINITIALIZED);
  VALUE(CUDA_ERROR_NO_DEVICE);
  VALUE(CUDA_ERROR_INVALID_HANDLE);
  VALUE(CUDA_ERROR_UNKNOWN);
  POINTER(CU_STREAM_LEGACY);
  POINTER(CU_STREAM_PER_THREAD);
  return 0;
}
// CHECK: CUDART_VERSION = 13000
// CHECK: cudaErrorDevicesUnavailable = 46
// CHECK: sizeof(struct cudaMemcpyAttributes) = 24
// CHECK-NEXT: offsetof(struct cudaMemcpyAttributes, srcAccessOrder) = 0
// CHECK-NEXT: offsetof(struct cudaMemcpyAttributes, srcLocHint) = 4
// CHECK-NEXT: offsetof(struct cudaMemcpyAttributes, dstLocHint) = 12
// CHECK-NEXT: offsetof(struct cudaMemcpyAttributes, flags) = 20
// CHECK: sizeof(struct cudaMemPoolProps) = 88
