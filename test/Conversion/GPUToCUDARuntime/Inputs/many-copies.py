"""Prints a function with N independent host-to-device copies of slices of
one host buffer into N device buffers (usage: many-copies.py N)."""
import sys

n = int(sys.argv[1])
print("func.func @many_copies(%%h: memref<%dx4xf32>) {" % n)
for i in range(n):
    print("  %%s%d = memref.subview %%h[%d, 0] [1, 4] [1, 1] : memref<%dx4xf32>"
          " to memref<4xf32, strided<[1], offset: %d>>" % (i, i, n, 4 * i))
    print("  %%d%d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>" % i)
    print("  etcopy.h2d %%s%d, %%d%d : memref<4xf32, strided<[1], offset: %d>>"
          " -> memref<4xf32, #etcopy.device<cuda:0>>" % (i, i, 4 * i))
for i in range(n):
    print("  memref.dealloc %%d%d : memref<4xf32, #etcopy.device<cuda:0>>" % i)
print("  return")
print("}")
