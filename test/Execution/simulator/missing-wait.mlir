// The simulator applies stream work only at synchronisation points, as a GPU
// may: reading the destination of an async device-to-host copy without a
// gpu.wait shows stale data; with the wait, the copied data.
// RUN: etcopy-opt %s --convert-scf-to-cf --convert-gpu-to-cuda-runtime --reconcile-unrealized-casts \
// RUN:   | %run_sim | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

memref.global "private" constant @data : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @zeros : memref<4xf32> = dense<0.0>

// Uploads @data and starts copying it back into a zeroed host buffer; waits
// for the copy only if asked to, then prints the buffer.
func.func @download(%wait: i1) {
  %data = memref.get_global @data : memref<4xf32>
  %zeros = memref.get_global @zeros : memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  memref.copy %zeros, %out : memref<4xf32> to memref<4xf32>
  %d = gpu.alloc () : memref<4xf32, #etcopy.device<cuda:0>>
  gpu.memcpy %d, %data : memref<4xf32, #etcopy.device<cuda:0>>, memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %out, %d : memref<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>
  scf.if %wait {
    gpu.wait [%t1]
  }
  %u = memref.cast %out : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  gpu.dealloc %d : memref<4xf32, #etcopy.device<cuda:0>>
  memref.dealloc %out : memref<4xf32>
  return
}

func.func @main() {
  // CHECK: data =
  // CHECK-NEXT: [0, 0, 0, 0]
  %false = arith.constant false
  call @download(%false) : (i1) -> ()
  // CHECK: data =
  // CHECK-NEXT: [1, 2, 3, 4]
  %true = arith.constant true
  call @download(%true) : (i1) -> ()
  return
}
