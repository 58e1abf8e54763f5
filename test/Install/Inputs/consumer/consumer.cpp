//===- consumer.cpp - A program built against installed etcopy -*- C++ -*-===//
//
// Uses only the installed headers and libraries: parses IR with the etcopy
// dialect, runs an etcopy pass on it by name, and round-trips data through
// the host runtime on the installed CUDA simulator.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"
#include "etcopy/Runtime/EtCopyRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *const kInput = R"mlir(
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = etcopy.h2d %x : tensor<4xf32> -> tensor<4xf32, #etcopy.device<CUDA:2>>
  %h = etcopy.d2h %d : tensor<4xf32, #etcopy.device<cuda:2>> -> tensor<4xf32>
  return %h : tensor<4xf32>
}
)mlir";

/// Parses kInput and runs etcopy-optimize-transfers, printing the result.
static bool runCompiler() {
  mlir::DialectRegistry registry;
  mlir::etcopy::registerAllDialects(registry);
  mlir::etcopy::registerAllPasses();
  registry.insert<mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kInput, &context);
  if (!module)
    return false;
  module->print(llvm::outs());
  auto pm = mlir::PassManager::on<mlir::ModuleOp>(&context);
  if (mlir::failed(mlir::parsePassPipeline("etcopy-optimize-transfers", pm)) ||
      mlir::failed(pm.run(*module)))
    return false;
  module->print(llvm::outs());
  return true;
}

/// Copies four floats to simulated cuda:0 and back.
static bool runRuntime() {
  etcopy_registry *registry = nullptr;
  etcopy_device_buffer *buffer = nullptr;
  const float in[4] = {1, 2, 3, 4};
  float out[4] = {0, 0, 0, 0};
  bool ok = etcopy_registry_create(0, &registry) == ETCOPY_STATUS_OK &&
            etcopy_registry_register_simulator(registry) == ETCOPY_STATUS_OK &&
            etcopy_device_buffer_create_from_host(
                registry, ETCOPY_DEVICE_CUDA, 0, in, sizeof(in), nullptr,
                &buffer) == ETCOPY_STATUS_OK &&
            etcopy_device_buffer_read(buffer, out, sizeof(out), nullptr) ==
                ETCOPY_STATUS_OK;
  if (!ok)
    llvm::errs() << "runtime: " << etcopy_last_error_message() << "\n";
  etcopy_device_buffer_destroy(buffer);
  etcopy_registry_destroy(registry);
  if (ok)
    llvm::outs() << "runtime: " << int(out[0]) << " " << int(out[1]) << " "
                 << int(out[2]) << " " << int(out[3]) << "\n";
  return ok;
}

int main() { return runCompiler() && runRuntime() ? 0 : 1; }
