//===- FakeCuda.cpp - A fake CUDA runtime for the runtime's unit tests ----===//
//
// The functions of the fake CUDA Runtime API table (FakeCuda.h). Each acts on
// `fake`, with the signature CudaApi gives the entry point; the error codes
// are CUDA 13's.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cstdlib>
#include <cstring>

namespace etcopy::runtime::fakecuda {

FakeCuda *fake = nullptr;

void FakeCuda::releaseLeftovers() {
  for (auto &entry : live)
    std::free(entry.first);
  live.clear();
  for (auto &entry : liveHost)
    std::free(entry.second);
  liveHost.clear();
  registered.clear();
}

namespace {

/// The pools of the devices: their addresses are the pool handles.
char pools[kPoolDevices];

int poolOf(void *pool) {
  return static_cast<int>(static_cast<char *>(pool) - pools);
}

std::string streamText(void *stream) { return stream ? "stream" : "legacy"; }

/// Logs `call` at the current device.
void logAtDevice(const std::string &call) {
  fake->calls.push_back(call + "@" + std::to_string(fake->current));
}

int fakeGetDeviceCount(int *count) {
  if (fake->getDeviceCountStatus)
    return fake->getDeviceCountStatus;
  *count = fake->deviceCount;
  return 0;
}
int fakeGetDevice(int *device) {
  if (fake->getDeviceStatus)
    return fake->getDeviceStatus;
  *device = fake->current;
  return 0;
}
int fakeSetDevice(int device) {
  int index = static_cast<int>(fake->setDeviceCalls.size());
  fake->setDeviceCalls.push_back(device);
  if (index == fake->failSetDeviceCall)
    return 101; // cudaErrorInvalidDevice
  fake->current = device;
  return 0;
}
int fakeMalloc(void **ptr, std::size_t size) {
  logAtDevice("cudaMalloc");
  ++fake->mallocCalls;
  if (fake->mallocStatus)
    return fake->mallocStatus;
  *ptr = std::malloc(size);
  fake->live[*ptr] = {fake->current, /*pooled=*/false};
  return 0;
}
int fakeFree(void *ptr) {
  logAtDevice("cudaFree");
  if (fake->freeStatus)
    return fake->freeStatus;
  if (!ptr)
    return 0;
  auto it = fake->live.find(ptr);
  if (it == fake->live.end() || it->second.pooled)
    return 1; // cudaErrorInvalidValue
  fake->live.erase(it);
  std::free(ptr);
  return 0;
}
int fakeMemcpy(void *dst, const void *src, std::size_t count, int kind) {
  ++fake->memcpyCalls;
  fake->lastMemcpyKind = kind;
  fake->lastMemcpyDevice = fake->current;
  if (fake->memcpyStatus)
    return fake->memcpyStatus;
  std::memcpy(dst, src, count);
  return 0;
}
int fakeMemcpyAsync(void *dst, const void *src, std::size_t count, int kind,
                    void *stream) {
  ++fake->memcpyAsyncCalls;
  fake->lastStream = stream;
  fake->lastMemcpyKind = kind;
  fake->lastMemcpyDevice = fake->current;
  if (fake->memcpyStatus)
    return fake->memcpyStatus;
  std::memcpy(dst, src, count);
  return 0;
}
int fakeStreamSynchronize(void *stream) {
  logAtDevice("cudaStreamSynchronize(" + streamText(stream) + ")");
  ++fake->streamSynchronizeCalls;
  fake->lastStream = stream;
  fake->lastSynchronizeDevice = fake->current;
  return fake->streamSynchronizeStatus;
}
int fakeDeviceSynchronize() {
  logAtDevice("cudaDeviceSynchronize");
  ++fake->deviceSynchronizeCalls;
  fake->lastSynchronizeDevice = fake->current;
  return fake->deviceSynchronizeStatus;
}

int fakeMallocAsync(void **ptr, std::size_t size, void *stream) {
  logAtDevice("cudaMallocAsync(" + streamText(stream) + ")");
  if (fake->mallocAsyncStatus)
    return fake->mallocAsyncStatus;
  *ptr = std::malloc(size);
  fake->live[*ptr] = {fake->current, /*pooled=*/true};
  return 0;
}
int fakeFreeAsync(void *ptr, void *stream) {
  logAtDevice("cudaFreeAsync(" + streamText(stream) + ")");
  if (fake->freeAsyncStatus)
    return fake->freeAsyncStatus;
  auto it = fake->live.find(ptr);
  if (it == fake->live.end() || !it->second.pooled)
    return 1; // cudaErrorInvalidValue
  fake->live.erase(it);
  std::free(ptr);
  return 0;
}
int fakeDeviceGetMemPool(void **pool, int device) {
  fake->calls.push_back("cudaDeviceGetMemPool(" + std::to_string(device) +
                        ")");
  if (fake->getPoolStatus)
    return fake->getPoolStatus;
  if (device < 0 || device >= kPoolDevices)
    return 101; // cudaErrorInvalidDevice
  *pool = &pools[device];
  return 0;
}
int fakeMemPoolGetAttribute(void *pool, int attr, void *value) {
  fake->calls.push_back("cudaMemPoolGetAttribute(" +
                        std::to_string(poolOf(pool)) + ", " +
                        std::to_string(attr) + ")");
  if (fake->getAttributeStatus)
    return fake->getAttributeStatus;
  std::memcpy(value, &fake->threshold[poolOf(pool)], sizeof(uint64_t));
  return 0;
}
int fakeMemPoolSetAttribute(void *pool, int attr, void *value) {
  uint64_t bytes = 0;
  std::memcpy(&bytes, value, sizeof(bytes));
  fake->calls.push_back("cudaMemPoolSetAttribute(" +
                        std::to_string(poolOf(pool)) + ", " +
                        std::to_string(attr) + ", " + std::to_string(bytes) +
                        ")");
  if (fake->setAttributeStatus)
    return fake->setAttributeStatus;
  fake->threshold[poolOf(pool)] = bytes;
  return 0;
}
int fakeMemPoolTrimTo(void *pool, std::size_t keep) {
  fake->calls.push_back("cudaMemPoolTrimTo(" + std::to_string(poolOf(pool)) +
                        ", " + std::to_string(keep) + ")");
  return fake->trimStatus;
}

int fakeMallocHost(void **ptr, std::size_t size) {
  if (fake->mallocHostCalls++ == fake->failMallocHostCall)
    return 2; // cudaErrorMemoryAllocation
  if (fake->mallocHostStatus)
    return fake->mallocHostStatus;
  if (fake->mallocHostReturnsNull) {
    *ptr = nullptr;
    return 0;
  }
  std::size_t total = (size + fake->mallocHostOffset + 4095) / 4096 * 4096;
  void *block = std::aligned_alloc(4096, total);
  *ptr = static_cast<char *>(block) + fake->mallocHostOffset;
  fake->liveHost[*ptr] = block;
  return 0;
}
int fakeFreeHost(void *ptr) {
  ++fake->freeHostCalls;
  if (fake->freeHostStatus)
    return fake->freeHostStatus;
  auto it = fake->liveHost.find(ptr);
  if (it == fake->liveHost.end())
    return ptr ? 1 : 0; // cudaErrorInvalidValue
  std::free(it->second);
  fake->liveHost.erase(it);
  return 0;
}
int fakeHostRegister(void *ptr, std::size_t size, unsigned flags) {
  ++fake->hostRegisterCalls;
  fake->lastRegisterFlags = flags;
  if (fake->hostRegisterStatus)
    return fake->hostRegisterStatus;
  char *begin = static_cast<char *>(ptr);
  for (const auto &[start, length] : fake->registered)
    if (begin < start + length && start < begin + size)
      return 712; // cudaErrorHostMemoryAlreadyRegistered
  fake->registered[begin] = size;
  return 0;
}
int fakeHostUnregister(void *ptr) {
  if (fake->hostUnregisterStatus)
    return fake->hostUnregisterStatus;
  if (!fake->registered.erase(static_cast<char *>(ptr)))
    return 713; // cudaErrorHostMemoryNotRegistered
  return 0;
}

const char *fakeGetErrorName(int error) {
  switch (error) {
  case 0:
    return "cudaSuccess";
  case 1:
    return "cudaErrorInvalidValue";
  case 2:
    return "cudaErrorMemoryAllocation";
  case 35:
    return "cudaErrorInsufficientDriver";
  case 101:
    return "cudaErrorInvalidDevice";
  case 700:
    return "cudaErrorIllegalAddress";
  case 712:
    return "cudaErrorHostMemoryAlreadyRegistered";
  case 713:
    return "cudaErrorHostMemoryNotRegistered";
  case 801:
    return "cudaErrorNotSupported";
  }
  return "unrecognized error code";
}
const char *fakeGetErrorString(int error) {
  switch (error) {
  case 2:
    return "out of memory";
  case 35:
    return "CUDA driver version is insufficient for CUDA runtime version";
  case 101:
    return "invalid device ordinal";
  case 700:
    return "an illegal memory access was encountered";
  case 712:
    return "part or all of the requested memory range is already mapped";
  case 713:
    return "pointer does not correspond to a registered memory region";
  case 801:
    return "operation not supported";
  }
  return "some error";
}

} // namespace

CudaApi makeFakeApi() {
  CudaApi api;
  api.mallocFn = fakeMalloc;
  api.freeFn = fakeFree;
  api.memcpyFn = fakeMemcpy;
  api.memcpyAsyncFn = fakeMemcpyAsync;
  api.streamSynchronizeFn = fakeStreamSynchronize;
  api.getDeviceFn = fakeGetDevice;
  api.setDeviceFn = fakeSetDevice;
  api.getDeviceCountFn = fakeGetDeviceCount;
  api.getErrorNameFn = fakeGetErrorName;
  api.getErrorStringFn = fakeGetErrorString;
  api.deviceSynchronizeFn = fakeDeviceSynchronize;
  api.mallocHostFn = fakeMallocHost;
  api.freeHostFn = fakeFreeHost;
  api.hostRegisterFn = fakeHostRegister;
  api.hostUnregisterFn = fakeHostUnregister;
  api.origin = "<fake>";
  return api;
}

CudaApi makeFakePoolApi() {
  CudaApi api = makeFakeApi();
  api.mallocAsyncFn = fakeMallocAsync;
  api.freeAsyncFn = fakeFreeAsync;
  api.deviceGetMemPoolFn = fakeDeviceGetMemPool;
  api.memPoolGetAttributeFn = fakeMemPoolGetAttribute;
  api.memPoolSetAttributeFn = fakeMemPoolSetAttribute;
  api.memPoolTrimToFn = fakeMemPoolTrimTo;
  return api;
}

} // namespace etcopy::runtime::fakecuda
