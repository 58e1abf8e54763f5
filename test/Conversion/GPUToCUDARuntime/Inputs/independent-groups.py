"""Prints a function of N independent groups, each a device allocation, an
out-form h2d and d2h copy through it and its deallocation (usage:
independent-groups.py N [--gpu]): the shape of the compile-time and code-size
measurements of the CUDA lowering. With --gpu, the same program in the
upstream gpu dialect's sync forms, for mlir-opt --gpu-async-region
--gpu-to-llvm."""
import sys

n = int(sys.argv[1])
gpu = "--gpu" in sys.argv[2:]
host = "memref<16xf32>"
device = host if gpu else "memref<16xf32, #etcopy.device<cuda:0>>"
print(f"func.func @groups(%h: {host}, %o: {host}) {{")
for i in range(n):
    if gpu:
        print(f"  %d{i} = gpu.alloc () : {device}")
        print(f"  gpu.memcpy %d{i}, %h : {device}, {host}")
        print(f"  gpu.memcpy %o, %d{i} : {host}, {device}")
        print(f"  gpu.dealloc %d{i} : {device}")
    else:
        print(f"  %d{i} = memref.alloc() : {device}")
        print(f"  etcopy.h2d %h, %d{i} : {host} -> {device}")
        print(f"  etcopy.d2h %d{i}, %o : {device} -> {host}")
        print(f"  memref.dealloc %d{i} : {device}")
print("  return")
print("}")
