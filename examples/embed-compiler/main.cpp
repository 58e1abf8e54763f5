//===- main.cpp - A compiler that embeds etcopy's pipeline -----*- C++ -*-===//
//
// What a downstream ML compiler does with etcopy, in one program: register
// what the pipelines need, build a model method with OpBuilder (a delegate
// compiled elsewhere for cuda:0, and host glue after it), run
// --etcopy-to-cuda with options, and translate the result to LLVM IR, ready
// for clang-22 and a link against libcudart (or the CUDA simulator).
//
//   embed-compiler OUTPUT.ll ['PIPELINE OPTIONS']
//
// The optional second argument is parsed as the pipeline's textual options
// (e.g. 'skip-h2d-for-method-inputs=true'), on top of the ones set in code.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/InitAll.h"
#include "etcopy/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Builds
///   func.func private @scale(tensor<4xf32>) -> tensor<4xf32>
///       attributes {etcopy.device = #etcopy.device<cuda:0>}
///   func.func @method(%x: tensor<4xf32>) -> tensor<4xf32> {
///     %s = call @scale(%x)         // on cuda:0
///     %y = math.sin %s             // host glue
///     %r = arith.addf %y, %x
///     return %r
///   }
/// Placement is the pipeline's job: the method says nothing about devices.
static OwningOpRef<ModuleOp> buildModel(MLIRContext &context) {
  OpBuilder builder(&context);
  Location loc = FileLineColLoc::get(&context, "model.py", 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto tensor = RankedTensorType::get({4}, builder.getF32Type());
  auto unaryType = builder.getFunctionType({tensor}, {tensor});
  // Both functions get the C interface, so that C code calls them through
  // pointers to memref descriptors.
  StringRef cInterface = "llvm.emit_c_interface";

  auto scale = func::FuncOp::create(builder, loc, "scale", unaryType);
  scale.setPrivate();
  scale->setAttr(etcopy::EtCopyDialect::getDeviceAttrName(),
                 etcopy::DeviceAttr::get(&context, etcopy::DeviceKind::CUDA,
                                         /*ordinal=*/0));
  scale->setAttr(cInterface, builder.getUnitAttr());

  auto method = func::FuncOp::create(builder, loc, "method", unaryType);
  method->setAttr(cInterface, builder.getUnitAttr());
  Block *body = method.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value x = body->getArgument(0);
  Value scaled = func::CallOp::create(builder, FileLineColLoc::get(
                                                   &context, "model.py", 2, 3),
                                      scale, ValueRange{x})
                     .getResult(0);
  Value sine = math::SinOp::create(builder, loc, scaled);
  Value sum = arith::AddFOp::create(builder, loc, sine, x);
  func::ReturnOp::create(builder, loc, sum);
  return module;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    llvm::errs() << "usage: embed-compiler OUTPUT.ll ['PIPELINE OPTIONS']\n";
    return 1;
  }

  // 1. Everything the pipelines need, plus the LLVM IR translation.
  DialectRegistry registry;
  etcopy::registerPipelineDependencies(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // 2. The model method.
  OwningOpRef<ModuleOp> module = buildModel(context);
  if (failed(verify(*module)))
    return 1;

  // 3. The pipeline, with options set in code and, optionally, from text.
  etcopy::EtCopyPipelineOptions options;
  options.arenaOwnership = etcopy::ArenaOwnership::Function;
  if (argc == 3 && failed(options.parseFromString(argv[2])))
    return 1;
  PassManager pm(&context);
  etcopy::buildEtCopyToCUDAPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;

  // 4. LLVM IR.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "model");
  if (!llvmModule)
    return 1;
  std::error_code error;
  llvm::raw_fd_ostream out(argv[1], error, llvm::sys::fs::OF_Text);
  if (error) {
    llvm::errs() << "embed-compiler: cannot write " << argv[1] << ": "
                 << error.message() << "\n";
    return 1;
  }
  llvmModule->print(out, /*AAW=*/nullptr);
  return 0;
}
