#!/usr/bin/env python3
# ===- cuda-device-visible.py - How many CUDA devices answer? -------------=== #
#
# Usage: cuda-device-visible.py [--devices N] [--count] [LIBCUDART]
#
# Loads the CUDA runtime LIBCUDART (default:
# /usr/local/cuda/lib64/libcudart.so) and counts the devices that answer:
# ordinals 0, 1, ... of those cudaGetDeviceCount reports, up to the first
# on which cudaSetDevice or a 256-byte cudaMalloc/cudaFree fails. A device
# the driver lists but cannot use (no context, out of memory, a MIG slice
# without access) does not answer; a gap ends the count, since tests name
# devices cuda:0, cuda:1, ... from 0. Exits 0 when at least N devices (default
# 1) answer, 1 otherwise; --count prints the number first.
#
# The probe of test/lit.cfg.py (features `cuda-gpu`: 1 device, `cuda-gpus-2`:
# 2), of utils/run-gpu-tests.sh, utils/transfer-performance/gpu-bandwidth.sh
# and the GPU check bundle (utils/gpu-check), which runs it against the
# bundle's libcudart or the simulator standing in for it. Each device it
# touches gets a CUDA context (about 200 ms on an H200), so it runs as a
# process of its own, never inside lit.
#
# ===----------------------------------------------------------------------=== #
import argparse
import ctypes
import sys


def answering_devices(cudart):
    """The number of devices, from ordinal 0, that take a context and a
    small allocation; 0 when the runtime does not load or reports an
    error."""
    try:
        runtime = ctypes.CDLL(cudart)
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if runtime.cudaGetDeviceCount(ctypes.byref(count)) != 0:
        return 0
    answering = 0
    for ordinal in range(count.value):
        pointer = ctypes.c_void_p(None)
        if (runtime.cudaSetDevice(ordinal) != 0 or
                runtime.cudaMalloc(ctypes.byref(pointer),
                                   ctypes.c_size_t(256)) != 0):
            break
        if runtime.cudaFree(pointer) != 0:
            break
        answering += 1
    return answering


def main():
    parser = argparse.ArgumentParser(
        description="Exit 0 when at least N CUDA devices answer.")
    parser.add_argument("--devices", type=int, default=1, metavar="N",
                        help="devices needed (default: 1)")
    parser.add_argument("--count", action="store_true",
                        help="print the number of devices that answer")
    parser.add_argument("cudart", nargs="?",
                        default="/usr/local/cuda/lib64/libcudart.so",
                        help="the CUDA runtime library to load")
    args = parser.parse_args()
    answering = answering_devices(args.cudart)
    if args.count:
        print(answering)
    return 0 if answering >= args.devices else 1


if __name__ == "__main__":
    sys.exit(main())
