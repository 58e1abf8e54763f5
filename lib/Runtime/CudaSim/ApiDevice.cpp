//===- ApiDevice.cpp - Device, error and version entry points ---*- C++ -*-===//
//
// The exported cudaGetDeviceCount, cudaGetDevice, cudaSetDevice,
// cudaDeviceSynchronize, cudaDeviceReset, the peer access functions, the
// last-error and error-string queries, and cudaRuntimeGetVersion and
// cudaDriverGetVersion. Each locks the simulator, counts the call (and fails
// it if ETCOPY_CUDA_SIM_FAIL says so), checks its arguments, traces itself and
// ends through Simulator::finish.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cinttypes>

using namespace etcopy::cudasim;

//===----------------------------------------------------------------------===//
// Device management and errors
//===----------------------------------------------------------------------===//

ETCOPY_CUDA_SIM_API cudaError_t cudaGetDeviceCount(int *count) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaGetDeviceCount);
  if (Error == cudaSuccess && !count)
    Error = Sim.fail("cudaGetDeviceCount", cudaErrorInvalidValue,
                     "invalid argument: count is null");
  else if (Error == cudaSuccess && (*count = Sim.Cfg.NumDevices) == 0)
    Error = cudaErrorNoDevice;
  Sim.trace("cudaGetDeviceCount()%s",
            Sim.result(Error, format("%d", Sim.Cfg.NumDevices)).c_str());
  return Sim.finish(EntryPoint::cudaGetDeviceCount, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaGetDevice(int *device) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaGetDevice);
  if (Error == cudaSuccess && !device)
    Error = Sim.fail("cudaGetDevice", cudaErrorInvalidValue,
                     "invalid argument: device is null");
  if (Error == cudaSuccess)
    *device = CurrentDevice;
  Sim.trace("cudaGetDevice()%s",
            Sim.result(Error, format("%d", CurrentDevice)).c_str());
  return Sim.finish(EntryPoint::cudaGetDevice, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaSetDevice(int device) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaSetDevice);
  if (Error == cudaSuccess && (device < 0 || device >= Sim.Cfg.NumDevices))
    Error = Sim.fail("cudaSetDevice", cudaErrorInvalidDevice,
                     "invalid device ordinal %d (%d device(s) simulated; set "
                     "ETCOPY_CUDA_SIM_DEVICES for more)",
                     device, Sim.Cfg.NumDevices);
  if (Error == cudaSuccess)
    CurrentDevice = device;
  Sim.trace("cudaSetDevice(%d)%s", device, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaSetDevice, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceSynchronize(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceSynchronize);
  if (Error == cudaSuccess)
    Error = Sim.checkDeviceNotCapturing("cudaDeviceSynchronize", CurrentDevice);
  if (Error == cudaSuccess) {
    DrainContext Ctx("cudaDeviceSynchronize");
    Sim.drainDevice(CurrentDevice, /*BlockingOnly=*/false, Ctx);
    Sim.waitUntil(Sim.deviceIdleAt(CurrentDevice));
    Sim.trimPoolsAtSync(CurrentDevice);
    Error = Ctx.Error;
    ++Sim.Stats.Syncs;
  }
  Sim.trace("cudaDeviceSynchronize(cuda:%d)%s", CurrentDevice,
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceSynchronize, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceReset(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceReset);
  if (Error == cudaSuccess)
    Error = Sim.resetCurrentDevice();
  Sim.trace("cudaDeviceReset(cuda:%d)%s", CurrentDevice,
            Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceReset, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer,
                                                        int device,
                                                        int peerDevice) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceCanAccessPeer);
  if (Error == cudaSuccess)
    Error = Sim.canAccessPeer(canAccessPeer, device, peerDevice);
  Sim.trace(
      "cudaDeviceCanAccessPeer(device=%d, peerDevice=%d)%s", device, peerDevice,
      Sim.result(Error, Error == cudaSuccess ? format("%d", *canAccessPeer)
                                             : std::string())
          .c_str());
  return Sim.finish(EntryPoint::cudaDeviceCanAccessPeer, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice,
                                                           unsigned int flags) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterOnDevice(EntryPoint::cudaDeviceEnablePeerAccess);
  if (Error == cudaSuccess)
    Error = Sim.enablePeerAccess(peerDevice, flags);
  Sim.trace("cudaDeviceEnablePeerAccess(peerDevice=%d, flags=%u, cuda:%d)%s",
            peerDevice, flags, CurrentDevice, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceEnablePeerAccess, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error =
      Sim.enterOnDevice(EntryPoint::cudaDeviceDisablePeerAccess);
  if (Error == cudaSuccess)
    Error = Sim.disablePeerAccess(peerDevice);
  Sim.trace("cudaDeviceDisablePeerAccess(peerDevice=%d, cuda:%d)%s", peerDevice,
            CurrentDevice, Sim.result(Error).c_str());
  return Sim.finish(EntryPoint::cudaDeviceDisablePeerAccess, Error);
}

// Once the runtime is unloading, the error queries answer that too.
ETCOPY_CUDA_SIM_API cudaError_t cudaGetLastError(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.isUnloading() ? cudaErrorCudartUnloading : LastError;
  LastError = cudaSuccess;
  Sim.trace("cudaGetLastError() -> %s", errorName(Error));
  return Error;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaPeekAtLastError(void) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.isUnloading() ? cudaErrorCudartUnloading : LastError;
  Sim.trace("cudaPeekAtLastError() -> %s", errorName(Error));
  return Error;
}

ETCOPY_CUDA_SIM_API const char *cudaGetErrorName(cudaError_t error) {
  return errorName(error);
}

ETCOPY_CUDA_SIM_API const char *cudaGetErrorString(cudaError_t error) {
  const ErrorDescription *Entry = findError(error);
  return Entry ? Entry->Text : kUnrecognizedError;
}

ETCOPY_CUDA_SIM_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaRuntimeGetVersion);
  if (Error == cudaSuccess && !runtimeVersion)
    Error = Sim.fail("cudaRuntimeGetVersion", cudaErrorInvalidValue,
                     "invalid argument: runtimeVersion is null");
  if (Error == cudaSuccess)
    *runtimeVersion = kRuntimeVersion;
  Sim.trace("cudaRuntimeGetVersion()%s",
            Sim.result(Error, format("%d", kRuntimeVersion)).c_str());
  return Sim.finish(EntryPoint::cudaRuntimeGetVersion, Error);
}

ETCOPY_CUDA_SIM_API cudaError_t cudaDriverGetVersion(int *driverVersion) {
  Simulator &Sim = Simulator::get();
  std::lock_guard<std::mutex> Lock(Sim.Mutex);
  cudaError_t Error = Sim.enterRuntime(EntryPoint::cudaDriverGetVersion);
  if (Error == cudaSuccess && !driverVersion)
    Error = Sim.fail("cudaDriverGetVersion", cudaErrorInvalidValue,
                     "invalid argument: driverVersion is null");
  if (Error == cudaSuccess)
    *driverVersion = kDriverVersion;
  Sim.trace("cudaDriverGetVersion()%s",
            Sim.result(Error, format("%d", kDriverVersion)).c_str());
  return Sim.finish(EntryPoint::cudaDriverGetVersion, Error);
}
