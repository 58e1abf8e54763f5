#!/usr/bin/env python3
#===- concurrent-method.py - The method that threads call in a test -------===#
#
# Usage: concurrent-method.py N NAME
#
# Prints the method that test/Execution/concurrent-calls*.test call from
# several host threads. @NAME(%in: memref<Nx4xf32>, %out: memref<Nx4xf32>,
# %fill: f32) adds 1 to %in on the host into a buffer it frees itself
# (pinned with pinned-host-memory), uploads its N rows into N device buffers
# (one batch), downloads them in reverse row order (another batch), sets a
# device buffer to %fill (cuMemsetD32Async, found through
# cudaGetDriverEntryPointByVersion on first use), copies it to cuda:1 (peer
# access enabled on first use, a second stream joined to the first) and
# back to the host, and writes
#     out[i][j] = (in[N-1-i][j] + 1) * 2 + fill
# so that every element of the result depends on the call's own input.
#
#===----------------------------------------------------------------------===#
import sys

n = int(sys.argv[1])
name = sys.argv[2]
host = "memref<%dx4xf32>" % n
row = "memref<4xf32>"
device = "memref<4xf32, #etcopy.device<cuda:0>>"
peer = "memref<4xf32, #etcopy.device<cuda:1>>"


def view(i):
    return "memref<4xf32, strided<[1], offset: %d>>" % (4 * i)


def loop(body):
    """A loop nest over [0, N) x [0, 4) with %i and %j."""
    return ("  scf.for %%i = %%c0 to %%cn step %%c1 {\n"
            "    scf.for %%j = %%c0 to %%c4 step %%c1 {\n%s"
            "    }\n  }" % body)


print("func.func @%s(%%in: %s, %%out: %s, %%fill: f32) "
      "attributes {llvm.emit_c_interface} {" % (name, host, host))
print("  %c0 = arith.constant 0 : index")
print("  %c1 = arith.constant 1 : index")
print("  %c4 = arith.constant 4 : index")
print("  %%cn = arith.constant %d : index" % n)
print("  %one = arith.constant 1.0 : f32")
print("  %two = arith.constant 2.0 : f32")
print("  %%stage = memref.alloc() : %s" % host)
print(loop(
    "      %%v = memref.load %%in[%%i, %%j] : %s\n"
    "      %%w = arith.addf %%v, %%one : f32\n"
    "      memref.store %%w, %%stage[%%i, %%j] : %s\n" % (host, host)))
for i in range(n):
    print("  %%s%d = memref.subview %%stage[%d, 0] [1, 4] [1, 1] : %s to %s"
          % (i, i, host, view(i)))
    print("  %%d%d = memref.alloc() : %s" % (i, device))
    print("  etcopy.h2d %%s%d, %%d%d : %s -> %s" % (i, i, view(i), device))
print("  %%back = memref.alloc() : %s" % host)
for i in range(n):
    r = n - 1 - i
    print("  %%b%d = memref.subview %%back[%d, 0] [1, 4] [1, 1] : %s to %s"
          % (i, r, host, view(r)))
    print("  etcopy.d2h %%d%d, %%b%d : %s -> %s" % (i, i, device, view(r)))
print("  %%f = memref.alloc() : %s" % device)
print("  gpu.memset %%f, %%fill : %s, f32" % device)
print("  %%g = memref.alloc() : %s" % peer)
print("  etcopy.d2d %%f, %%g : %s -> %s" % (device, peer))
print("  %%frow = memref.alloc() : %s" % row)
print("  etcopy.d2h %%g, %%frow : %s -> %s" % (peer, row))
for i in range(n):
    print("  memref.dealloc %%d%d : %s" % (i, device))
print("  memref.dealloc %%f : %s" % device)
print("  memref.dealloc %%g : %s" % peer)
print(loop(
    "      %%v = memref.load %%back[%%i, %%j] : %s\n"
    "      %%x = memref.load %%frow[%%j] : %s\n"
    "      %%w = arith.mulf %%v, %%two : f32\n"
    "      %%y = arith.addf %%w, %%x : f32\n"
    "      memref.store %%y, %%out[%%i, %%j] : %s\n" % (host, row, host)))
print("  memref.dealloc %%stage : %s" % host)
print("  memref.dealloc %%back : %s" % host)
print("  memref.dealloc %%frow : %s" % row)
print("  return")
print("}")
