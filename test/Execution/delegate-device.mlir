// The delegate calling contract: a delegate runs with its own device
// current, whatever device the method's last copy selected, and the
// method's caller finds its device current again afterwards. The copies are
// written out and the pipeline leaves them where they are, so that the last
// copy before each call is to the other device.
// RUN: %cc -shared -fPIC -I%cuda_sim_include %S/Inputs/delegate-device.c \
// RUN:   -o %t.so %etcopy_cuda_sim
// RUN: etcopy-opt %s --etcopy-to-cuda="place-copies=false optimize-transfers=false" \
// RUN:   | env ETCOPY_CUDA_SIM_DEVICES=2 %run_sim,%t.so | FileCheck %s

// CHECK: twice_on1 runs on device 1
// CHECK-NEXT: twice_on0 runs on device 0
// CHECK-NEXT: host code runs with device 0 current
// CHECK-NEXT: sizes = [4] strides = [1] data =
// CHECK-NEXT: [4, -8, 2, 40]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @report_device()

func.func private @twice_on0(tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
    attributes {etcopy.device = #etcopy.device<cuda:0>, llvm.emit_c_interface}
func.func private @twice_on1(tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:1>, llvm.emit_c_interface}

// method(x) = twice_on1(x) + twice_on0(x) = 4 * x, summed on the host. The
// copies %late0 and %late1 are never used: each makes its device the last
// one selected before the call on the other device.
func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
  %x0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %x1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %late0 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:0>>
  %a = call @twice_on1(%x1) : (tensor<4xf32, #etcopy.device<cuda:1>>) -> tensor<4xf32, #etcopy.device<cuda:1>>
  %late1 = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<cuda:1>>
  %b = call @twice_on0(%x0) : (tensor<4xf32, #etcopy.device<cuda:0>>) -> tensor<4xf32, #etcopy.device<cuda:0>>
  %ha = etcopy.d2h %a : tensor<4xf32, #etcopy.device<cuda:1>> -> tensor<4xf32>
  %hb = etcopy.d2h %b : tensor<4xf32, #etcopy.device<cuda:0>> -> tensor<4xf32>
  %r = arith.addf %ha, %hb : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 0.5, 10.0]> : tensor<4xf32>
  %r = call @method(%x) : (tensor<4xf32>) -> tensor<4xf32>
  call @report_device() : () -> ()
  %m = bufferization.to_buffer %r : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
