"""Prints a method of N stream-ordered delegate calls alternating with host
glue, and a @main that runs it once and prints its result.

Each step uploads the running tensor, reverses it on cuda:0
(Inputs/delegate-stream-ordered.c's reverse_on0, which returns a fresh
device buffer), downloads the result and adds 1 on the host. N is even, so
the method returns x + N in x's order: the host reference.

Usage: alternating-method.py N
"""
import sys

steps = int(sys.argv[1])
print("""func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @reverse_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}

func.func @method(%x0: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant dense<1.0> : tensor<4xf32>""")
for i in range(steps):
    print(f"""  %d{i} = etcopy.h2d %x{i} : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %r{i} = call @reverse_on0(%d{i}) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %h{i} = etcopy.d2h %r{i} : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %x{i + 1} = arith.addf %h{i}, %one : tensor<4xf32>""")
print(f"""  return %x{steps} : tensor<4xf32>
}}

func.func @main() {{
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}""")
