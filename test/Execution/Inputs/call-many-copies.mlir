// Appended to the output of many-copies.py 1000 by persistent-streams.test:
// calls @many_copies 1000 times on one pair of host buffers.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %calls = arith.constant 1000 : index
  %h = memref.alloc() : memref<1000x4xf32>
  %out = memref.alloc() : memref<1000x4xf32>
  scf.for %i = %c0 to %calls step %c1 {
    func.call @many_copies(%h, %out) : (memref<1000x4xf32>, memref<1000x4xf32>) -> ()
  }
  memref.dealloc %h : memref<1000x4xf32>
  memref.dealloc %out : memref<1000x4xf32>
  return
}
