// ExecuTorch's skip-h2d-for-method-inputs and skip-d2h-for-method-outputs
// (PropagateDeviceConfig), end to end: each combination lowers the methods
// with --etcopy-to-cuda, links them with a C harness playing the runtime
// (Inputs/skip-flags-harness.c) and the device delegates, and runs on the
// CUDA simulator. The harness reads each method's exported signature
// (@<method>_etcopy_signature) and passes device buffers for the arguments
// it places on a device, host buffers otherwise, and reads the results
// back from where it places them; every combination prints the data of the
// host build (--etcopy-to-host, host delegates), the reference. The trace,
// filtered to the generated code's copies (cudaMemcpyAsync, and
// cudaMemcpyBatchAsync for the two uploads; the harness and the delegates
// use synchronous cudaMemcpy), checks the copies each flag removes:
// @forward, ExecuTorch's add(a, b) exported with both flags for
// device-resident pipelines, makes 3, 1, 2 and 0 copies.
// RUN: etcopy-opt %s --etcopy-to-host | mlir-translate --mlir-to-llvmir -o %t.host.ll
// RUN: %cc -Wno-override-module -I%cuda_sim_include %S/Inputs/skip-flags-harness.c \
// RUN:   %S/Inputs/executorch-delegates.c %t.host.ll -o %t.host.exe -lm \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir
// RUN: %t.host.exe | FileCheck %s --check-prefixes=CHECK,HOST
//
// RUN: etcopy-opt %s --etcopy-to-cuda | mlir-translate --mlir-to-llvmir -o %t.default.ll
// RUN: etcopy-opt %s --etcopy-to-cuda="skip-h2d-for-method-inputs=true" 2>/dev/null \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.skiph2d.ll
// RUN: etcopy-opt %s --etcopy-to-cuda="skip-d2h-for-method-outputs=true" \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.skipd2h.ll
// RUN: etcopy-opt %s --etcopy-to-cuda="skip-h2d-for-method-inputs=true skip-d2h-for-method-outputs=true" 2>/dev/null \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.both.ll
// RUN: %cc -c -DETCOPY_DEVICE_DELEGATES -I%cuda_sim_include %S/Inputs/executorch-delegates.c -o %t.delegates.o
// RUN: %cc -c -I%cuda_sim_include %S/Inputs/skip-flags-harness.c -o %t.harness.o
// RUN: %cc -Wno-override-module %t.harness.o %t.delegates.o %t.default.ll -o %t.default.exe \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir -lm
// RUN: %cc -Wno-override-module %t.harness.o %t.delegates.o %t.skiph2d.ll -o %t.skiph2d.exe \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir -lm
// RUN: %cc -Wno-override-module %t.harness.o %t.delegates.o %t.skipd2h.ll -o %t.skipd2h.exe \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir -lm
// RUN: %cc -Wno-override-module %t.harness.o %t.delegates.o %t.both.ll -o %t.both.exe \
// RUN:   %etcopy_cuda_sim -Wl,-rpath,%etcopy_lib_dir -lm
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t.default.exe 2>&1 | grep -E "trace: cudaMemcpy(2D|Batch)?Async\(|^[^e]" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t.skiph2d.exe 2>&1 | grep -E "trace: cudaMemcpy(2D|Batch)?Async\(|^[^e]" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SKIPH2D
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t.skipd2h.exe 2>&1 | grep -E "trace: cudaMemcpy(2D|Batch)?Async\(|^[^e]" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SKIPD2H
// RUN: env ETCOPY_CUDA_SIM_TRACE=1 %t.both.exe 2>&1 | grep -E "trace: cudaMemcpy(2D|Batch)?Async\(|^[^e]" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,BOTH

func.func private @add(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}

// The input feeds only the delegate and the delegate's output is the method
// output: skip-h2d takes both inputs on the device, skip-d2h returns the
// sum there.
// HOST: signature: forward(cpu, cpu) -> cpu
// DEFAULT: signature: forward(cpu, cpu) -> cpu
// SKIPH2D: signature: forward(cuda:0, cuda:0) -> cpu
// SKIPD2H: signature: forward(cpu, cpu) -> cuda:0
// BOTH: signature: forward(cuda:0, cuda:0) -> cuda:0
// CHECK-NEXT: call forward
// DEFAULT-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// DEFAULT-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// SKIPH2D-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// SKIPD2H-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// CHECK-NEXT: forward = [1.5, 1, 5, 4.25]
func.func @forward(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32>
    attributes {llvm.emit_c_interface} {
  %r = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// %a is also read on the host (sin), so it stays a host argument under
// skip-h2d (ExecuTorch requires a single user; etcopy keeps the copy and
// says why in a remark); the host result stays a host result under
// skip-d2h.
// HOST: signature: mixed(cpu, cpu) -> cpu, cpu
// DEFAULT: signature: mixed(cpu, cpu) -> cpu, cpu
// SKIPH2D: signature: mixed(cpu, cuda:0) -> cpu, cpu
// SKIPD2H: signature: mixed(cpu, cpu) -> cuda:0, cpu
// BOTH: signature: mixed(cpu, cuda:0) -> cuda:0, cpu
// CHECK-NEXT: call mixed
// DEFAULT-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// DEFAULT-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// SKIPH2D-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// SKIPH2D-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, DeviceToHost,
// SKIPD2H-NEXT: cudaMemcpyBatchAsync(2 copies, 32 bytes, 1 attribute(s), stream={{.*}}) [h2d_pageable 2]
// BOTH-NEXT: cudaMemcpyAsync({{.*}}, 16 bytes, HostToDevice,
// CHECK-NEXT: mixed#0 = [1.5, 1, 5, 4.25]
// CHECK-NEXT: mixed#1 = [0.841471, 0.909297, 0.14112, -0.756802]
func.func @mixed(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    attributes {llvm.emit_c_interface} {
  %r = func.call @add(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = math.sin %a : tensor<2x2xf32>
  return %r, %s : tensor<2x2xf32>, tensor<2x2xf32>
}
