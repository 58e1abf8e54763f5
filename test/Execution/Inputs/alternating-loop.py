"""Prints a method whose body alternates stream-ordered delegate calls with
host glue inside an scf.for of N iterations and an scf.if, and a @main that
runs it once with N and prints its result.

Each iteration uploads the running tensor, reverses it on cuda:0
(Inputs/delegate-stream-ordered.c's reverse_on0, which returns a fresh
device buffer), downloads it and adds 1 on the host (as max(h + 1, h), so
that the downloaded buffer is read after the sum and freed in the loop
body, not yielded); then an even iteration reverses it twice more on cuda:0
and adds 1 again, an odd one yields it as is. Every two iterations reverse
the tensor four times, so for an even N the method returns x + 3N/2 in x's
order: the host reference.

Usage: alternating-loop.py N
"""
import sys

steps = int(sys.argv[1])
device = "tensor<4xf32, #etcopy.device<cuda:0>>"
print(f"""func.func private @printMemrefF32(memref<*xf32>) attributes {{llvm.emit_c_interface}}
func.func private @reverse_on0({device}) -> {device}
    attributes {{etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}}

func.func @method(%x0: tensor<4xf32>, %n: index) -> tensor<4xf32> {{
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0) -> tensor<4xf32> {{
    %d = etcopy.h2d %x : tensor<4xf32> -> {device}
    %e = func.call @reverse_on0(%d) : ({device}) -> {device}
    %h = etcopy.d2h %e : {device} -> tensor<4xf32>
    %p = arith.addf %h, %one : tensor<4xf32>
    %q = arith.maximumf %p, %h : tensor<4xf32>
    %parity = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %parity, %c0 : index
    %y = scf.if %even -> tensor<4xf32> {{
      %d1 = etcopy.h2d %q : tensor<4xf32> -> {device}
      %e1 = func.call @reverse_on0(%d1) : ({device}) -> {device}
      %e2 = func.call @reverse_on0(%e1) : ({device}) -> {device}
      %h2 = etcopy.d2h %e2 : {device} -> tensor<4xf32>
      %z = arith.addf %h2, %one : tensor<4xf32>
      scf.yield %z : tensor<4xf32>
    }} else {{
      scf.yield %q : tensor<4xf32>
    }}
    scf.yield %y : tensor<4xf32>
  }}
  return %r : tensor<4xf32>
}}

func.func @main() {{
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %n = arith.constant {steps} : index
  %r = call @method(%x, %n) : (tensor<4xf32>, index) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}""")
