// Compiled ahead of time and linked against the simulator, the lowered code
// gives back what it keeps across calls, its default stream and the idle
// pinned host blocks, from the exit handler it registers after the CUDA
// runtime's (docs/CUDALowering.md, "Release at exit"). The simulator tears
// itself down from its own exit handler as libcudart does and then reports
// every stream and allocation still alive (docs/CudaSimulator.md, "Exit"):
// here the blocks and the stream are released after the last print and
// before that handler, which reports nothing, and the process exits with 0.
// Released later, from the module's destructors only (without that exit
// handler), both blocks (560 bytes) are reported as leaked and fail the
// process, and the stream as never destroyed, as compute-sanitizer reported
// on an H200; DESTRUCTOR in test/Runtime/CudaSim/exit-teardown.c checks
// that report on a C program.
// RUN: etcopy-opt %s --etcopy-to-cuda="pinned-host-memory=true" \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %cc -Wno-override-module %t.ll -o %t %etcopy_cuda_sim %mlir_runner_utils \
// RUN:   -Wl,-rpath,%etcopy_lib_dir -Wl,-rpath,%llvm_lib_dir
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t 2>&1 | FileCheck %s \
// RUN:   --implicit-check-not=leak --implicit-check-not=unloading \
// RUN:   --implicit-check-not='trace: cudaFreeHost' \
// RUN:   --implicit-check-not='trace: cudaStreamDestroy'

// CHECK: cudaStreamCreateWithFlags(flags=1, cuda:0) -> [[STREAM:S[0-9]+]]
// CHECK: cudaMallocHost(272 bytes) -> [[BLOCK4:0x[0-9a-f]+]]
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4]
// CHECK: cudaMallocHost(288 bytes) -> [[BLOCK8:0x[0-9a-f]+]]
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4,  5,  6,  7,  8]
// CHECK: data =
// CHECK-NEXT: [1,  2,  3,  4]
// CHECK: main returns
// CHECK-DAG: trace: cudaStreamDestroy([[STREAM]])
// CHECK-DAG: trace: cudaFreeHost([[BLOCK4]])
// CHECK-DAG: trace: cudaFreeHost([[BLOCK8]])
// CHECK: stats: streams_created=1 streams_destroyed=1
// CHECK: stats: entry-points: {{.*}} cudaMallocHost=2 cudaFreeHost=2

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @puts(!llvm.ptr) -> i32

llvm.mlir.global private constant @returns("main returns\00") {addr_space = 0 : i32}

// Stages 1..n through cuda:0 and prints what comes back; the staging
// buffers are pinned, and their block goes back to the cache at the free.
func.func @stage(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %in = memref.alloc(%n) : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %c1 : index
    %k = arith.index_cast %j : index to i32
    %v = arith.sitofp %k : i32 to f32
    memref.store %v, %in[%i] : memref<?xf32>
  }
  %d = memref.alloc(%n) : memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.h2d %in, %d : memref<?xf32> -> memref<?xf32, #etcopy.device<cuda:0>>
  etcopy.d2h %d, %out : memref<?xf32, #etcopy.device<cuda:0>> -> memref<?xf32>
  %u = memref.cast %out : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %d : memref<?xf32, #etcopy.device<cuda:0>>
  memref.dealloc %in : memref<?xf32>
  memref.dealloc %out : memref<?xf32>
  return
}

// Two sizes, so two blocks stay cached when main returns; the third call
// reuses the first block.
func.func @main() -> i32 {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  call @stage(%c4) : (index) -> ()
  call @stage(%c8) : (index) -> ()
  call @stage(%c4) : (index) -> ()
  %message = llvm.mlir.addressof @returns : !llvm.ptr
  %printed = call @puts(%message) : (!llvm.ptr) -> i32
  %zero = arith.constant 0 : i32
  return %zero : i32
}
