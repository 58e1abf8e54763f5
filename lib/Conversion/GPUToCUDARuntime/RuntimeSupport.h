//===- RuntimeSupport.h - CUDA lowering's runtime support -------*- C++ -*-===//
//
// RuntimeSupport: the functions of CudaSupport*.c, embedded in the pass as
// MLIR bytecode, that a lowered module calls. The planning and the lowering
// of the runtime ops call them through it; the pass copies the functions
// used into the module at the end (step 4 of GPUToCUDARuntime.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMESUPPORT_H
#define LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMESUPPORT_H

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <optional>

namespace mlir {
class SymbolTable;
} // namespace mlir

namespace mlir::etcopy::cuda_lowering {

/// The functions of CudaSupport*.c that a module uses, copied into it with
/// everything they reference. The library is read lazily: its top-level ops
/// (the functions' signatures, the globals) when the first function is
/// asked for, and the body of a function or global only when the module
/// uses it, so that a module pays for what it uses (reading all of the
/// library took about as long as the rest of the pass on a small module).
class RuntimeSupport {
public:
  RuntimeSupport(ModuleOp module, SymbolTable &symbols)
      : module(module), symbols(symbols) {}
  RuntimeSupport(const RuntimeSupport &) = delete;
  RuntimeSupport &operator=(const RuntimeSupport &) = delete;
  ~RuntimeSupport() {
    // The reader must settle every op it has not read before it goes (MLIR
    // built with assertions checks it): the bodies the module did not use
    // are dropped unread, with the rest of the library.
    if (reader)
      (void)reader->finalize([](Operation *) { return false; });
  }

  MLIRContext *getContext() { return module.getContext(); }

  /// The support function `name`, marked as used. The library is read on
  /// first use.
  LLVM::LLVMFuncOp use(StringRef name) {
    if (!library)
      load();
    LLVM::LLVMFuncOp function = functions.lookup(name);
    assert(function && "not a function of the runtime support");
    used.insert(function);
    return function;
  }

  /// Calls the support function `name`. The calls of one function share
  /// the properties of the first (building them anew uniques half a dozen
  /// attributes per call).
  Value call(OpBuilder &builder, Location loc, StringRef name,
             ValueRange arguments) {
    auto [entry, first] = prototypes.try_emplace(name);
    CallPrototype &prototype = entry->second;
    Operation *callOp;
    if (first) {
      auto created = LLVM::CallOp::create(builder, loc, use(name), arguments);
      prototype.properties = created.getProperties();
      prototype.resultTypes = llvm::to_vector(created->getResultTypes());
      callOp = created;
    } else {
      OperationState state(loc, LLVM::CallOp::getOperationName());
      state.addOperands(arguments);
      state.addTypes(prototype.resultTypes);
      state.useProperties(prototype.properties);
      callOp = builder.create(state);
    }
    return callOp->getNumResults() ? callOp->getResult(0) : Value();
  }

  /// Reports the symbols of the module that have the name of a function of
  /// the library but another type or kind: the lowered module could not
  /// call the library's.
  LogicalResult checkModuleSymbols();

  /// Copies the used functions, and the symbols they reference, into the
  /// module; the module's own definition of a function wins.
  void emit();

  /// Whether `name` is a function of the library that `emit` put in the
  /// module (or found there).
  bool isSupportFunction(StringRef name) const {
    return emitted.contains(name);
  }

private:
  void load();
  /// Reads the body of `op`, a top-level op of the library, if it has not
  /// been read, and gives it the library's renamed symbols.
  void materialize(Operation *op);

  struct CallPrototype {
    LLVM::CallOp::Properties properties;
    SmallVector<Type, 1> resultTypes;
  };

  ModuleOp module;
  SymbolTable &symbols;
  // The reader reads bodies from the embedded bytes on demand; it refers to
  // its configuration and to the library's ops, so it is declared after
  // them and destroyed before them.
  std::optional<ParserConfig> config;
  OwningOpRef<ModuleOp> library;
  std::unique_ptr<BytecodeReader> reader;
  /// The library's local symbols, renamed.
  DenseMap<StringAttr, StringAttr> renamed;
  AttrTypeReplacer replacer;
  llvm::StringMap<CallPrototype> prototypes;
  llvm::StringMap<LLVM::LLVMFuncOp> functions;
  llvm::SetVector<Operation *> used;
  llvm::StringSet<> emitted;
};

} // namespace mlir::etcopy::cuda_lowering

#endif // LIB_CONVERSION_GPUTOCUDARUNTIME_RUNTIMESUPPORT_H
