"""Prints a method that uploads K host temporaries, each computed on the
host and passed to a stream-ordered delegate, reading nothing back until its
end, and a @main that calls it twice and prints the second result.

Upload i is x + i, reversed on cuda:0 (Inputs/delegate-stream-ordered.c's
reverse_on0); the method returns the last delegate's result, downloaded:
reverse(x + K - 1), the host reference.

Usage: uploads-ahead.py K
"""
import sys

uploads = int(sys.argv[1])
device = "tensor<4xf32, #etcopy.device<cuda:0>>"
print(f"""func.func private @printMemrefF32(memref<*xf32>) attributes {{llvm.emit_c_interface}}
func.func private @reverse_on0({device}) -> {device}
    attributes {{etcopy.device = #etcopy.device<cuda:0>, etcopy.stream_ordered, llvm.emit_c_interface}}

func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {{""")
for i in range(uploads):
    print(f"""  %c{i} = arith.constant dense<{float(i)}> : tensor<4xf32>
  %t{i} = arith.addf %x, %c{i} : tensor<4xf32>
  %d{i} = etcopy.h2d %t{i} : tensor<4xf32> -> {device}
  %r{i} = func.call @reverse_on0(%d{i}) : ({device}) -> {device}""")
print(f"""  %h = etcopy.d2h %r{uploads - 1} : {device} -> tensor<4xf32>
  return %h : tensor<4xf32>
}}

func.func @main() {{
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %first = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}}""")
