#!/usr/bin/env python3
# ===- cuda-device-visible.py - Does the real CUDA runtime see a GPU? -----=== #
#
# Usage: cuda-device-visible.py [LIBCUDART]  (default:
# /usr/local/cuda/lib64/libcudart.so). Exits 0 when the runtime loads and
# reports at least one device, 1 otherwise: the probe of the GPU scripts
# (utils/run-gpu-tests.sh, utils/transfer-performance/gpu-bandwidth.sh),
# the same as test/lit.cfg.py's `cuda-gpu` feature.
#
# ===----------------------------------------------------------------------=== #
import ctypes
import sys

cudart = sys.argv[1] if len(sys.argv) > 1 else \
    "/usr/local/cuda/lib64/libcudart.so"
count = ctypes.c_int(0)
try:
    runtime = ctypes.CDLL(cudart)
except OSError:
    sys.exit(1)
sys.exit(0 if runtime.cudaGetDeviceCount(ctypes.byref(count)) == 0
         and count.value > 0 else 1)
