/*===- CudaRuntimeSubset.h - Subset of the CUDA 13 Runtime API ---*- C -*-===*\
|*                                                                            *|
|* The declarations of the CUDA Runtime API functions, types and constants    *|
|* that libetcopy_cuda_sim implements, copied from CUDA 13's                  *|
|* cuda_runtime_api.h and driver_types.h with the same signatures, enum       *|
|* values and struct layouts. The simulator is built against it when the CUDA *|
|* toolkit is absent, and C test programs include it to talk to the simulator *|
|* without the toolkit. It is valid C and C++; in C++ the stream arguments    *|
|* have the same default values as in the real header.                        *|
|*                                                                            *|
|* It also declares the driver types (cuda.h, cudaTypedefs.h) of the driver   *|
|* functions that the simulator's cudaGetDriverEntryPointByVersion returns.   *|
|*                                                                            *|
|* Each part is empty if the real header it copies was included first, so the *|
|* two can be mixed in that order; including a real header after this one is  *|
|* not supported (it redefines the types).                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_RUNTIME_CUDASIM_CUDARUNTIMESUBSET_H
#define ETCOPY_RUNTIME_CUDASIM_CUDARUNTIMESUBSET_H

#include <stddef.h>

#if !defined(__CUDA_RUNTIME_API_H__)

#ifdef __cplusplus
#define ETCOPY_CUDA_DEFAULT_ARG(Value) = Value
extern "C" {
#else
#define ETCOPY_CUDA_DEFAULT_ARG(Value)
#endif

/* The runtime version these declarations were taken from (13.0). */
#define CUDART_VERSION 13000

/*===----------------------------------------------------------------------===*
 * Error codes (values as in driver_types.h; only the ones the simulator
 * returns or names are listed)
 *===----------------------------------------------------------------------===*/

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidHostPointer = 16,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorDevicesUnavailable = 46,
  cudaErrorNotYetImplemented = 31,
  cudaErrorStubLibrary = 34,
  cudaErrorInsufficientDriver = 35,
  cudaErrorCallRequiresNewerDriver = 36,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorStartupFailure = 127,
  cudaErrorInvalidKernelImage = 200,
  cudaErrorDeviceUninitialized = 201,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorSymbolNotFound = 500,
  cudaErrorIllegalState = 401,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorPeerAccessNotEnabled = 705,
  cudaErrorTooManyPeers = 711,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorTimeout = 909,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

/*===----------------------------------------------------------------------===*
 * Types
 *===----------------------------------------------------------------------===*/

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
  long reserved[8];
};

enum cudaMemLocationType {
  cudaMemLocationTypeInvalid = 0,
  cudaMemLocationTypeNone = 0,
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
  cudaMemLocationTypeHostNuma = 3,
  cudaMemLocationTypeHostNumaCurrent = 4
};

struct cudaMemLocation {
  enum cudaMemLocationType type;
  int id;
};

enum cudaMemcpyFlags {
  cudaMemcpyFlagDefault = 0x0,
  cudaMemcpyFlagPreferOverlapWithCompute = 0x1
};

enum cudaMemcpySrcAccessOrder {
  cudaMemcpySrcAccessOrderInvalid = 0x0,
  cudaMemcpySrcAccessOrderStream = 0x1,
  cudaMemcpySrcAccessOrderDuringApiCall = 0x2,
  cudaMemcpySrcAccessOrderAny = 0x3,
  cudaMemcpySrcAccessOrderMax = 0x7FFFFFFF
};

struct cudaMemcpyAttributes {
  enum cudaMemcpySrcAccessOrder srcAccessOrder;
  struct cudaMemLocation srcLocHint;
  struct cudaMemLocation dstLocHint;
  unsigned int flags;
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;

/* Graphs: a captured graph and its executable instance. */
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;

enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
};

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
};

/* Kernels: libraries of device code (cudaLibraryLoadData) and the kernels
 * in them. */
typedef struct CUlib_st *cudaLibrary_t;
typedef struct CUkern_st *cudaKernel_t;

/* The simulator takes no JIT option; the first values, for reference. */
enum cudaJitOption {
  cudaJitMaxRegisters = 0,
  cudaJitThreadsPerBlock = 1,
  cudaJitWallTime = 2
};

enum cudaLibraryOption {
  cudaLibraryHostUniversalFunctionAndDataTable = 0,
  cudaLibraryBinaryIsPreserved = 1
};

/* vector_types.h */
struct dim3 {
  unsigned int x, y, z;
#ifdef __cplusplus
  dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
#endif
};
typedef struct dim3 dim3;

/* Memory pools of the stream-ordered allocator. */
enum cudaMemPoolAttr {
  cudaMemPoolReuseFollowEventDependencies = 0x1,
  cudaMemPoolReuseAllowOpportunistic = 0x2,
  cudaMemPoolReuseAllowInternalDependencies = 0x3,
  cudaMemPoolAttrReleaseThreshold = 0x4,
  cudaMemPoolAttrReservedMemCurrent = 0x5,
  cudaMemPoolAttrReservedMemHigh = 0x6,
  cudaMemPoolAttrUsedMemCurrent = 0x7,
  cudaMemPoolAttrUsedMemHigh = 0x8
};

enum cudaMemAllocationType {
  cudaMemAllocationTypeInvalid = 0x0,
  cudaMemAllocationTypePinned = 0x1,
  cudaMemAllocationTypeManaged = 0x2,
  cudaMemAllocationTypeMax = 0x7FFFFFFF
};

enum cudaMemAllocationHandleType {
  cudaMemHandleTypeNone = 0x0,
  cudaMemHandleTypePosixFileDescriptor = 0x1,
  cudaMemHandleTypeWin32 = 0x2,
  cudaMemHandleTypeWin32Kmt = 0x4,
  cudaMemHandleTypeFabric = 0x8
};

#define cudaMemPoolCreateUsageHwDecompress 0x2

struct cudaMemPoolProps {
  enum cudaMemAllocationType allocType;
  enum cudaMemAllocationHandleType handleTypes;
  struct cudaMemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};

/*===----------------------------------------------------------------------===*
 * Constants
 *===----------------------------------------------------------------------===*/

#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04

#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04

#define cudaEventWaitDefault 0x00
#define cudaEventWaitExternal 0x01

#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02

#define cudaCpuDeviceId ((int)-1)
#define cudaInvalidDeviceId ((int)-2)

enum cudaGetDriverEntryPointFlags {
  cudaEnableDefault = 0x0,
  cudaEnableLegacyStream = 0x1,
  cudaEnablePerThreadDefaultStream = 0x2
};

enum cudaDriverEntryPointQueryResult {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2
};

/*===----------------------------------------------------------------------===*
 * Device management and errors
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaGetDeviceCount(int *count);
extern cudaError_t cudaGetDevice(int *device);
extern cudaError_t cudaSetDevice(int device);
extern cudaError_t cudaDeviceSynchronize(void);
extern cudaError_t cudaDeviceReset(void);
extern cudaError_t cudaGetLastError(void);
extern cudaError_t cudaPeekAtLastError(void);
extern const char *cudaGetErrorName(cudaError_t error);
extern const char *cudaGetErrorString(cudaError_t error);
extern cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device,
                                           int peerDevice);
extern cudaError_t cudaDeviceEnablePeerAccess(int peerDevice,
                                              unsigned int flags);
extern cudaError_t cudaDeviceDisablePeerAccess(int peerDevice);
extern cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion,
    unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus
        ETCOPY_CUDA_DEFAULT_ARG(NULL));
extern cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
extern cudaError_t cudaDriverGetVersion(int *driverVersion);

/*===----------------------------------------------------------------------===*
 * Memory management
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaMalloc(void **devPtr, size_t size);
extern cudaError_t cudaFree(void *devPtr);
extern cudaError_t cudaMallocAsync(void **devPtr, size_t size,
                                   cudaStream_t hStream);
extern cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream);
extern cudaError_t cudaMallocManaged(
    void **devPtr, size_t size,
    unsigned int flags ETCOPY_CUDA_DEFAULT_ARG(cudaMemAttachGlobal));
extern cudaError_t cudaMallocHost(void **ptr, size_t size);
extern cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
extern cudaError_t cudaFreeHost(void *ptr);
extern cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
extern cudaError_t cudaHostUnregister(void *ptr);
extern cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                            unsigned int flags);
extern cudaError_t
cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                         const void *ptr);

/*===----------------------------------------------------------------------===*
 * Memory pools (the stream-ordered allocator)
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool,
                                               int device);
extern cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device);
extern cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool);
extern cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool,
                                     const struct cudaMemPoolProps *poolProps);
extern cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool);
extern cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                           enum cudaMemPoolAttr attr,
                                           void *value);
extern cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
                                           enum cudaMemPoolAttr attr,
                                           void *value);
extern cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool,
                                     size_t minBytesToKeep);
extern cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size,
                                           cudaMemPool_t memPool,
                                           cudaStream_t stream);

extern cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                              enum cudaMemcpyKind kind);
extern cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count,
                enum cudaMemcpyKind kind,
                cudaStream_t stream ETCOPY_CUDA_DEFAULT_ARG(0));
extern cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                                size_t spitch, size_t width, size_t height,
                                enum cudaMemcpyKind kind);
extern cudaError_t
cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height, enum cudaMemcpyKind kind,
                  cudaStream_t stream ETCOPY_CUDA_DEFAULT_ARG(0));
/* CUDA 13 signature: 12.8's failIdx argument is gone. */
extern cudaError_t cudaMemcpyBatchAsync(void *const *dsts,
                                        const void *const *srcs,
                                        const size_t *sizes, size_t count,
                                        struct cudaMemcpyAttributes *attrs,
                                        size_t *attrsIdxs, size_t numAttrs,
                                        cudaStream_t stream);
extern cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src,
                                  int srcDevice, size_t count);
extern cudaError_t
cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                    size_t count,
                    cudaStream_t stream ETCOPY_CUDA_DEFAULT_ARG(0));
extern cudaError_t cudaMemset(void *devPtr, int value, size_t count);
extern cudaError_t
cudaMemsetAsync(void *devPtr, int value, size_t count,
                cudaStream_t stream ETCOPY_CUDA_DEFAULT_ARG(0));

/*===----------------------------------------------------------------------===*
 * Streams and events
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaStreamCreate(cudaStream_t *pStream);
extern cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                             unsigned int flags);
extern cudaError_t cudaStreamDestroy(cudaStream_t stream);
extern cudaError_t cudaStreamSynchronize(cudaStream_t stream);
extern cudaError_t cudaStreamQuery(cudaStream_t stream);
extern cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                    unsigned int flags ETCOPY_CUDA_DEFAULT_ARG(0));

extern cudaError_t cudaEventCreate(cudaEvent_t *event);
extern cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event,
                                            unsigned int flags);
extern cudaError_t
cudaEventRecord(cudaEvent_t event,
                cudaStream_t stream ETCOPY_CUDA_DEFAULT_ARG(0));
extern cudaError_t cudaEventSynchronize(cudaEvent_t event);
extern cudaError_t cudaEventQuery(cudaEvent_t event);
extern cudaError_t cudaEventDestroy(cudaEvent_t event);

/*===----------------------------------------------------------------------===*
 * Libraries and kernels
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaLibraryLoadData(
    cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
    void **jitOptionsValues, unsigned int numJitOptions,
    enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
    unsigned int numLibraryOptions);
extern cudaError_t cudaLibraryUnload(cudaLibrary_t library);
extern cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel,
                                        cudaLibrary_t library,
                                        const char *name);
extern cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim,
                                    dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream);

/*===----------------------------------------------------------------------===*
 * Stream capture and graphs
 *===----------------------------------------------------------------------===*/

extern cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                          enum cudaStreamCaptureMode mode);
extern cudaError_t cudaStreamEndCapture(cudaStream_t stream,
                                        cudaGraph_t *pGraph);
extern cudaError_t
cudaStreamIsCapturing(cudaStream_t stream,
                      enum cudaStreamCaptureStatus *pCaptureStatus);
extern cudaError_t cudaGraphInstantiate(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
    unsigned long long flags ETCOPY_CUDA_DEFAULT_ARG(0));
extern cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec,
                                   cudaStream_t stream);
extern cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
extern cudaError_t cudaGraphDestroy(cudaGraph_t graph);

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef ETCOPY_CUDA_DEFAULT_ARG

#endif /* !defined(__CUDA_RUNTIME_API_H__) */

/*===----------------------------------------------------------------------===*
 * Driver API types of the functions cudaGetDriverEntryPointByVersion returns
 * (from cuda.h and cudaTypedefs.h; each part is empty if its real header was
 * included first)
 *===----------------------------------------------------------------------===*/

#if !defined(__cuda_cuda_h__)
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;

/* Only the codes the simulated driver functions return or name. */
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#endif /* !defined(__cuda_cuda_h__) */

#if !defined(CUDATYPEDEFS_H)
typedef CUresult (*PFN_cuMemsetD8Async_v3020)(CUdeviceptr dstDevice,
                                              unsigned char uc, size_t N,
                                              CUstream hStream);
typedef CUresult (*PFN_cuMemsetD16Async_v3020)(CUdeviceptr dstDevice,
                                               unsigned short us, size_t N,
                                               CUstream hStream);
typedef CUresult (*PFN_cuMemsetD32Async_v3020)(CUdeviceptr dstDevice,
                                               unsigned int ui, size_t N,
                                               CUstream hStream);
#endif /* !defined(CUDATYPEDEFS_H) */

#endif /* ETCOPY_RUNTIME_CUDASIM_CUDARUNTIMESUBSET_H */
