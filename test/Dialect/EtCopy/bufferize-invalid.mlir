// RUN: etcopy-opt %s -split-input-file -verify-diagnostics --etcopy-bufferize

// etcopy-bufferize rejects a delegate whose signature is not on its device:
// the delegate would be handed host memory (or another device's).

// expected-error @+1 {{delegate @host_argument runs on cuda:0, but its argument #1 has type 'tensor<4xf32>' on the host; place the copies first (etcopy-propagate-device, the pipelines' place-copies option) or give the delegate's signature its device}}
func.func private @host_argument(tensor<4xf32, #etcopy.device<cuda:0>>, tensor<4xf32>)
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{delegate @other_device runs on cuda:0, but its result #0 has type 'memref<4xf32, #etcopy.device<cuda:1>>' on cuda:1}}
func.func private @other_device(memref<4xf32, #etcopy.device<cuda:0>>) -> memref<4xf32, #etcopy.device<cuda:1>>
    attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// expected-error @+1 {{delegate @foreign runs on cuda:0, but its argument #0 has type 'memref<4xf32, 1>' on an unknown placement}}
func.func private @foreign(memref<4xf32, 1>) attributes {etcopy.device = #etcopy.device<cuda:0>}

// -----

// Host functions, also when placed on the host explicitly, take anything.
func.func private @host(tensor<4xf32>, memref<4xf32, #etcopy.device<cuda:0>>)
    attributes {etcopy.device = #etcopy.device<cpu>}
func.func private @host_unplaced(tensor<4xf32, #etcopy.device<cuda:1>>)
