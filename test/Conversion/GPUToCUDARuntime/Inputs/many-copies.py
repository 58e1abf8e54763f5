"""Prints a function with N independent host-to-device copies of slices of
one host buffer into N device buffers, then N independent device-to-host
copies of them into slices of another (usage: many-copies.py N [--main]).
With --main, also a @main that fills the input with 0, 1, 2, ..., runs the
function and prints the output."""
import sys

n = int(sys.argv[1])
host = "memref<%dx4xf32>" % n
device = "memref<4xf32, #etcopy.device<cuda:0>>"


def row(i):
    return "memref<4xf32, strided<[1], offset: %d>>" % (4 * i)


print("func.func @many_copies(%%h: %s, %%out: %s) {" % (host, host))
for i in range(n):
    print("  %%s%d = memref.subview %%h[%d, 0] [1, 4] [1, 1] : %s to %s"
          % (i, i, host, row(i)))
    print("  %%d%d = memref.alloc() : %s" % (i, device))
    print("  etcopy.h2d %%s%d, %%d%d : %s -> %s" % (i, i, row(i), device))
for i in range(n):
    print("  %%o%d = memref.subview %%out[%d, 0] [1, 4] [1, 1] : %s to %s"
          % (i, i, host, row(i)))
    print("  etcopy.d2h %%d%d, %%o%d : %s -> %s" % (i, i, device, row(i)))
for i in range(n):
    print("  memref.dealloc %%d%d : %s" % (i, device))
print("  return")
print("}")
if "--main" in sys.argv[2:]:
    print(f"""
func.func private @printMemrefF32(memref<*xf32>) attributes {{llvm.emit_c_interface}}

func.func @main() {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cn = arith.constant {n} : index
  %h = memref.alloc() : {host}
  %out = memref.alloc() : {host}
  scf.for %i = %c0 to %cn step %c1 {{
    scf.for %j = %c0 to %c4 step %c1 {{
      %k = affine.apply affine_map<(i, j) -> (i * 4 + j)>(%i, %j)
      %ki = arith.index_cast %k : index to i32
      %v = arith.sitofp %ki : i32 to f32
      memref.store %v, %h[%i, %j] : {host}
    }}
  }}
  call @many_copies(%h, %out) : ({host}, {host}) -> ()
  %u = memref.cast %out : {host} to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %h : {host}
  memref.dealloc %out : {host}
  return
}}""")
