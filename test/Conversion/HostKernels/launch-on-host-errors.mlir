// RUN: etcopy-opt %s --etcopy-outline-host-kernels=launch-on-host -split-input-file -verify-diagnostics

// The reference build cannot run a kernel whose threads must run together,
// nor an async launch: errors naming the kernel and the reason.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync() kernel {
      gpu.barrier
      gpu.return
    }
  }
  func.func @barrier(%n: index) {
    // expected-error @+1 {{cannot run kernel @kernels::@sync on the host: it uses gpu.barrier, which needs the threads of a block to run together}}
    gpu.launch_func @kernels::@sync blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @async(%n: index) {
    %t = gpu.wait async
    // expected-error @+1 {{cannot run an async 'gpu.launch_func' on the host; use its sync form}}
    %u = gpu.launch_func async [%t] @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n)
    gpu.wait [%u]
    return
  }
}
