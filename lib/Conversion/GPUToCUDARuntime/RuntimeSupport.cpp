//===- RuntimeSupport.cpp - CUDA lowering's runtime support -----*- C++ -*-===//
//
// Reads the embedded bytecode of CudaSupport*.c lazily, renames its local
// symbols, checks the module's symbols against its functions and copies the
// functions a module uses, with what they reference, into the module.
//
//===----------------------------------------------------------------------===//

#include "RuntimeSupport.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace mlir::etcopy::cuda_lowering {

/// CudaSupport*.c, linked, in the LLVM dialect as mlir-translate imported
/// it, in MLIR bytecode. The reader expects the padding of aligned sections
/// to be relative to an aligned buffer.
alignas(16) const unsigned char kCudaSupportBytecode[] = {
#include "CudaSupport.mlirbc.inc"
};

namespace {

/// Drops what clang and the importer attach to functions, calls and globals
/// that carries no meaning for the lowered module (target CPU, argument
/// hints, linkage details) and would only make it harder to read.
void stripImportedAttributes(Operation *op) {
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
    func.removePassthroughAttr();
    func.removeTargetCpuAttr();
    func.removeTuneCpuAttr();
    func.removeTargetFeaturesAttr();
    func.removeDsoLocalAttr();
    func.removeNoUnwindAttr();
    func.removeWillReturnAttr();
    func.removeMemoryEffectsAttr();
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
    func.removeUnnamedAddrAttr();
    func.removeFramePointerAttr();
    func.removeUwtableKindAttr();
  } else if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    call.removeArgAttrsAttr();
    call.removeResAttrsAttr();
    call.removeNoUnwindAttr();
    call.removeWillReturnAttr();
    call.removeMemoryEffectsAttr();
    call.setTailCallKind(LLVM::tailcallkind::TailCallKind::None);
  } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
    global.removeDsoLocalAttr();
    global.removeUnnamedAddrAttr();
    global.removeAlignmentAttr();
  }
}

} // namespace

void RuntimeSupport::load() {
  MLIRContext *ctx = module.getContext();
  // The bytecode was written from the library's text by the MLIR the pass
  // is built against, and verified then.
  config.emplace(ctx, /*verifyAfterParse=*/false);
  llvm::MemoryBufferRef buffer(
      StringRef(reinterpret_cast<const char *>(kCudaSupportBytecode),
                sizeof(kCudaSupportBytecode)),
      "CudaSupport");
  reader = std::make_unique<BytecodeReader>(buffer, *config,
                                            /*lazyLoad=*/true);
  Block top;
  // The module's body is read now; the isolated ops in it (functions,
  // globals with an initializer region) are read when materialized.
  if (failed(reader->readTopLevel(
          &top, [](Operation *op) { return isa<ModuleOp>(op); })) ||
      !llvm::hasSingleElement(top) || !isa<ModuleOp>(top.front()))
    llvm::report_fatal_error("the embedded CUDA runtime support does not "
                             "read: the build is broken");
  Operation *libraryOp = &top.front();
  libraryOp->remove();
  library = cast<ModuleOp>(libraryOp);

  // Local symbols of the C code (string constants, static functions) get
  // the __etcopy prefix, and a number if the module has the name already.
  for (Operation &op : *library->getBody()) {
    stripImportedAttributes(&op);
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (!symbol)
      continue;
    StringRef name = symbol.getName();
    auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
    bool isLocal =
        isa<LLVM::GlobalOp>(op)
            ? cast<LLVM::GlobalOp>(op).getLinkage() == LLVM::Linkage::Private ||
                  cast<LLVM::GlobalOp>(op).getLinkage() ==
                      LLVM::Linkage::Internal
            : function && function.getLinkage() == LLVM::Linkage::Internal;
    if (!isLocal) {
      if (function)
        functions[name] = function;
      continue;
    }
    std::string base =
        ("__etcopy" + Twine(name.starts_with(".") ? "" : ".") + name).str();
    std::string newName = base;
    for (unsigned counter = 0; symbols.lookup(newName); ++counter)
      newName = base + "." + std::to_string(counter);
    renamed[symbol.getNameAttr()] = StringAttr::get(ctx, newName);
    symbol.setName(newName);
  }
  replacer.addReplacement(
      [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
        if (StringAttr name = renamed.lookup(ref.getAttr()))
          return FlatSymbolRefAttr::get(name);
        return std::nullopt;
      });
  // References in the top-level ops (the destructor table); those in the
  // bodies are renamed as the bodies are read.
  for (Operation &op : *library->getBody())
    replacer.replaceElementsIn(&op, /*replaceAttrs=*/true,
                               /*replaceLocs=*/false, /*replaceTypes=*/false);
}

void RuntimeSupport::materialize(Operation *op) {
  if (!reader->isMaterializable(op))
    return;
  if (failed(reader->materialize(op)))
    llvm::report_fatal_error("the embedded CUDA runtime support does not "
                             "read: the build is broken");
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    stripImportedAttributes(nested);
    replacer.replaceElementsIn(nested, /*replaceAttrs=*/true,
                               /*replaceLocs=*/false, /*replaceTypes=*/false);
  });
}

LogicalResult RuntimeSupport::checkModuleSymbols() {
  if (!library)
    return success();
  bool failed = false;
  for (auto &[name, function] : functions) {
    Operation *existing = symbols.lookup(name);
    if (!existing)
      continue;
    auto existingFunction = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (!existingFunction) {
      existing->emitError("'")
          << name << "' is defined by '" << existing->getName()
          << "', but the CUDA lowering needs it to be '" << function->getName()
          << "'";
      failed = true;
    } else if (existingFunction.getFunctionType() !=
               function.getFunctionType()) {
      existing->emitError("'")
          << name << "' is declared with a type that differs "
          << (name.starts_with("cu")
                  ? "from the CUDA Runtime API's"
                  : "from the one the CUDA lowering's runtime support uses")
          << ": expected " << function.getFunctionType() << ", got "
          << existingFunction.getFunctionType();
      failed = true;
    }
  }
  return failure(failed);
}

void RuntimeSupport::emit() {
  if (!library)
    return;
  SymbolTable librarySymbols(*library);
  auto forEachReference = [&](Operation *root,
                              function_ref<void(Operation *)> fn) {
    materialize(root);
    root->walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](FlatSymbolRefAttr ref) {
          if (Operation *target = librarySymbols.lookup(ref.getAttr()))
            fn(target);
        });
    });
  };
  // The used functions and, transitively, what they reference.
  auto close = [&](size_t from) {
    for (size_t i = from; i < used.size(); ++i)
      forEachReference(used[i],
                       [&](Operation *target) { used.insert(target); });
  };
  close(0);
  // A destructor of the library (the release of the default streams) comes
  // with the state it releases: when a used function references a global
  // the destructor references.
  SmallVector<Attribute> destructors, priorities, data;
  for (auto dtors : library->getOps<LLVM::GlobalDtorsOp>()) {
    for (auto [dtor, priority, datum] : llvm::zip(
             dtors.getDtors(), dtors.getPriorities(), dtors.getData())) {
      Operation *function =
          librarySymbols.lookup(cast<FlatSymbolRefAttr>(dtor).getAttr());
      bool releasesUsedState = false;
      forEachReference(function, [&](Operation *target) {
        releasesUsedState |=
            isa<LLVM::GlobalOp>(target) && used.contains(target);
      });
      if (!releasesUsedState)
        continue;
      size_t from = used.size();
      if (used.insert(function))
        close(from);
      destructors.push_back(dtor);
      priorities.push_back(priority);
      data.push_back(datum);
    }
  }

  // The conversion declared the libc functions it calls (free,
  // aligned_alloc) after `symbols` was built: the module's own symbols are
  // read again, once.
  DenseSet<StringAttr> moduleSymbols;
  for (auto symbol : module.getOps<SymbolOpInterface>())
    moduleSymbols.insert(symbol.getNameAttr());
  for (Operation *op : used) {
    StringAttr name = cast<SymbolOpInterface>(op).getNameAttr();
    emitted.insert(name);
    // checkModuleSymbols made sure that a function the module has (a
    // declaration, or a replacement of the error policy) is compatible.
    if (moduleSymbols.contains(name))
      continue;
    // Functions the program calls are emitted once per program: the linker
    // keeps one copy. So are global variables (the table of default
    // streams), so that the program has one. The error policy and the
    // stream provider stay weak, so that a program replaces them by
    // defining the symbols.
    auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (function && !function.isExternal() &&
        function.getLinkage() == LLVM::Linkage::External)
      function.setLinkage(LLVM::Linkage::LinkonceODR);
    auto global = dyn_cast<LLVM::GlobalOp>(op);
    if (global && global.getLinkage() == LLVM::Linkage::External &&
        (global.getValueOrNull() || !global.getInitializerRegion().empty()))
      global.setLinkage(LLVM::Linkage::LinkonceODR);
    op->remove();
    symbols.insert(op);
  }
  if (destructors.empty())
    return;
  // One llvm.mlir.global_dtors per module: extend the module's own.
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (auto existing :
       llvm::make_early_inc_range(module.getOps<LLVM::GlobalDtorsOp>())) {
    destructors.append(existing.getDtors().begin(), existing.getDtors().end());
    priorities.append(existing.getPriorities().begin(),
                      existing.getPriorities().end());
    data.append(existing.getData().begin(), existing.getData().end());
    existing.erase();
  }
  LLVM::GlobalDtorsOp::create(builder, module.getLoc(),
                              builder.getArrayAttr(destructors),
                              builder.getArrayAttr(priorities),
                              builder.getArrayAttr(data));
}

} // namespace mlir::etcopy::cuda_lowering
