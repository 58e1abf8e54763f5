// A C-style main for the link test: copies data to cuda:0 and back and
// returns the number of elements that came back wrong (0 on success).
memref.global "private" constant @data : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @main() -> i32 {
  %data = memref.get_global @data : memref<4xf32>
  %d = memref.alloc() : memref<4xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %data, %d : memref<4xf32> -> memref<4xf32, #etcopy.device<cuda:0>>
  %h = memref.alloc() : memref<4xf32>
  etcopy.d2h %d, %h : memref<4xf32, #etcopy.device<cuda:0>> -> memref<4xf32>
  memref.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %wrong = scf.for %i = %c0 to %c4 step %c1 iter_args(%n = %zero) -> i32 {
    %a = memref.load %data[%i] : memref<4xf32>
    %b = memref.load %h[%i] : memref<4xf32>
    %same = arith.cmpf oeq, %a, %b : f32
    %inc = arith.extui %same : i1 to i32
    %miss = arith.subi %one, %inc : i32
    %next = arith.addi %n, %miss : i32
    scf.yield %next : i32
  }
  memref.dealloc %h : memref<4xf32>
  return %wrong : i32
}
