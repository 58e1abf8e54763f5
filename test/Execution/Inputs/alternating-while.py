"""Prints a method whose body alternates a delegate call with host glue
inside an scf.while with data-dependent termination (the shape of a decode
loop), and a @main that runs it once and prints its result.

The loop goes on while the state's first element is below N + 1. Each
iteration uploads the state, doubles it on cuda:0 (Inputs/delegates.c's
scale, which returns a fresh device buffer), downloads it and computes
h / 2 + 1 on the host: the state grows by 1 per iteration, so the loop runs
N times and the method returns x + N, the host reference.

Usage: alternating-while.py N
"""
import sys

steps = int(sys.argv[1])
device = "tensor<4xf32, #etcopy.device<cuda:0>>"
print(f"""func.func private @printMemrefF32(memref<*xf32>) attributes {{llvm.emit_c_interface}}
func.func private @scale({device}) -> {device}
    attributes {{etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}}

func.func @method(%x0: tensor<4xf32>, %limit: f32) -> tensor<4xf32> {{
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %r = scf.while (%x = %x0) : (tensor<4xf32>) -> tensor<4xf32> {{
    %first = tensor.extract %x[%c0] : tensor<4xf32>
    %go = arith.cmpf olt, %first, %limit : f32
    scf.condition(%go) %x : tensor<4xf32>
  }} do {{
  ^bb0(%y: tensor<4xf32>):
    %d = etcopy.h2d %y : tensor<4xf32> -> {device}
    %e = func.call @scale(%d) : ({device}) -> {device}
    %h = etcopy.d2h %e : {device} -> tensor<4xf32>
    %p = arith.mulf %h, %half : tensor<4xf32>
    %q = arith.addf %p, %one : tensor<4xf32>
    scf.yield %q : tensor<4xf32>
  }}
  return %r : tensor<4xf32>
}}

func.func @main() {{
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %limit = arith.constant {steps + 1}.0 : f32
  %r = call @method(%x, %limit) : (tensor<4xf32>, f32) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}""")
