"""Prints a function that copies a device buffer into N fresh host buffers
(d2h copies left in flight), then stores into one more fresh host buffer
and loads from one of two others chosen at run time (usage:
pending-copies.py N)."""
import sys

n = int(sys.argv[1])
device = "memref<4xf32, #etcopy.device<cuda:0>>"
print(f"func.func @pending(%d: {device}, %v: f32, %c: i1) -> f32 {{")
print("  %c0 = arith.constant 0 : index")
print("  %a = memref.alloc() : memref<4xf32>")
print("  %b = memref.alloc() : memref<4xf32>")
for i in range(n):
    print(f"  %h{i} = memref.alloc() : memref<4xf32>")
    print(f"  etcopy.d2h %d, %h{i} : {device} -> memref<4xf32>")
print("  %fresh = memref.alloc() : memref<4xf32>")
print("  memref.store %v, %fresh[%c0] : memref<4xf32>")
print("  %chosen = scf.if %c -> memref<4xf32> {")
print("    scf.yield %a : memref<4xf32>")
print("  } else {")
print("    scf.yield %b : memref<4xf32>")
print("  }")
print("  %x = memref.load %chosen[%c0] : memref<4xf32>")
print("  return %x : f32")
print("}")
