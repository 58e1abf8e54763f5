//===- KernelLowering.cpp - gpu.binary and gpu.launch_func lowering -*- C++ -*-===//
//
// Kernels through the CUDA Runtime's library API. Each gpu.binary becomes a
// constant global holding its object (PTX text, NUL-terminated, or a cubin)
// and a handle cell that the runtime support fills with cudaLibraryLoadData
// on the first launch; each launched kernel a cell for the handle that
// cudaLibraryGetKernel gives. A launch reads the kernel's handle (a load
// once it is cached), stores its arguments as the NVVM calling convention
// expands them (a memref is its descriptor's fields: allocated and aligned
// pointers, offset, sizes, strides) and calls cudaLaunchKernel on the
// function's stream.
//
// Where the module holds the host versions of a binary's kernels
// (etcopy-outline-host-kernels), a second constant global holds a table of
// them (etcopy_host_kernel_table, lib/Runtime/CudaSim/CudaSimKernels.h):
// "ETCHOSTK", the count, then per kernel its name, the kinds of its
// parameters ('p' a pointer, else the byte size of the value), an entry
// `void (void **args, const uint64_t ids[12])` and, for a kernel without
// host version, why. The runtime support hands it to the CUDA simulator
// beside the loaded library; CUDA gets the image alone, which is exactly
// the object.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::etcopy::cuda_lowering {

namespace {

/// The object of `binary` that the launches load: the one its
/// #gpu.select_object handler names, else the first.
gpu::ObjectAttr getSelectedObject(gpu::BinaryOp binary) {
  ArrayRef<Attribute> objects = binary.getObjects().getValue();
  if (objects.empty())
    return {};
  std::optional<Attribute> handler = binary.getOffloadingHandler();
  if (auto select =
          dyn_cast_or_null<gpu::SelectObjectAttr>(handler.value_or(Attribute()))) {
    Attribute target = select.getTarget();
    if (!target)
      return cast<gpu::ObjectAttr>(objects.front());
    if (auto index = dyn_cast<IntegerAttr>(target)) {
      int64_t position = index.getInt();
      return position >= 0 && position < int64_t(objects.size())
                 ? cast<gpu::ObjectAttr>(objects[position])
                 : gpu::ObjectAttr();
    }
    for (Attribute object : objects)
      if (cast<gpu::ObjectAttr>(object).getTarget() == target)
        return cast<gpu::ObjectAttr>(object);
    return {};
  }
  return cast<gpu::ObjectAttr>(objects.front());
}

/// The number of LLVM parameters a memref of `type` expands to (allocated
/// and aligned pointers, offset, sizes, strides).
int64_t getNumDescriptorFields(MemRefType type) {
  return 3 + 2 * type.getRank();
}

/// The kinds of the parameters of a host kernel (after the ids), as the
/// simulator reads them: 'p' for a pointer, else the value's byte size.
/// With `barePointerInputs` (the kernel's inputs before the lowering), each
/// memref is one pointer.
std::string getParameterKinds(LLVM::LLVMFuncOp hostKernel,
                              ArrayRef<Type> barePointerInputs) {
  std::string kinds;
  DataLayout layout = DataLayout::closest(hostKernel);
  auto addKind = [&](Type type) {
    if (isa<LLVM::LLVMPointerType>(type)) {
      kinds.push_back('p');
      return;
    }
    uint64_t bytes = layout.getTypeSize(type);
    kinds.push_back(bytes < 10 ? char('0' + bytes) : '?');
  };
  ArrayRef<Type> params =
      hostKernel.getFunctionType().getParams().drop_front(kNumHostKernelIds);
  if (barePointerInputs.empty()) {
    llvm::for_each(params, addKind);
    return kinds;
  }
  for (Type input : barePointerInputs) {
    auto memref = dyn_cast<MemRefType>(input);
    if (memref)
      kinds.push_back('p');
    else
      addKind(params.front());
    params = params.drop_front(memref ? getNumDescriptorFields(memref) : 1);
  }
  return kinds;
}

/// Loads the kernel arguments of a bare-pointer launch from `args` (one
/// slot per kernel input, `inputs`) into `arguments` as the host kernel's
/// lowered parameters `params` take them: a memref (static shape, identity
/// layout) as the descriptor of its pointer, scalars as they are.
void expandBarePointers(OpBuilder &builder, Location loc, Value args,
                        ArrayRef<Type> inputs, ArrayRef<Type> params,
                        SmallVectorImpl<Value> &arguments) {
  auto pointerType = LLVM::LLVMPointerType::get(builder.getContext());
  DenseMap<std::pair<Type, int64_t>, Value> constants;
  for (auto [slot, input] : llvm::enumerate(inputs)) {
    Value address = LLVM::GEPOp::create(
        builder, loc, pointerType, pointerType, args,
        ArrayRef<LLVM::GEPArg>{int32_t(slot)});
    Value pointer = LLVM::LoadOp::create(builder, loc, pointerType, address);
    auto memref = dyn_cast<MemRefType>(input);
    if (!memref) {
      arguments.push_back(
          LLVM::LoadOp::create(builder, loc, params.front(), pointer));
      params = params.drop_front();
      continue;
    }
    Value aligned = LLVM::LoadOp::create(builder, loc, pointerType, pointer);
    Type indexType = params[2];
    auto constant = [&](int64_t value) -> Value {
      Value &constant = constants[{indexType, value}];
      if (!constant)
        constant = LLVM::ConstantOp::create(
            builder, loc, indexType, builder.getIntegerAttr(indexType, value));
      return constant;
    };
    arguments.append({aligned, aligned, constant(0)});
    for (int64_t size : memref.getShape())
      arguments.push_back(constant(size));
    int64_t stride = 1;
    SmallVector<Value> strides;
    for (int64_t size : llvm::reverse(memref.getShape())) {
      strides.push_back(constant(stride));
      stride *= size;
    }
    arguments.append(strides.rbegin(), strides.rend());
    params = params.drop_front(getNumDescriptorFields(memref));
  }
}

} // namespace

bool validateLaunch(gpu::LaunchFuncOp launch, SymbolTable &symbols,
                    bool barePointers) {
  bool valid = true;
  StringAttr moduleName = launch.getKernelModuleName();
  Operation *container = symbols.lookup(moduleName);
  if (isa_and_present<gpu::GPUModuleOp>(container)) {
    launch.emitError("cannot launch @")
        << moduleName.getValue() << "::@" << launch.getKernelName().getValue()
        << ": its gpu.module is not compiled; run gpu-module-to-binary (as "
           "--etcopy-to-cuda does) before convert-gpu-to-cuda-runtime";
    return false;
  }
  auto binary = dyn_cast_or_null<gpu::BinaryOp>(container);
  if (!binary) {
    launch.emitError("cannot launch @")
        << moduleName.getValue() << "::@" << launch.getKernelName().getValue()
        << ": the module has no gpu.binary @" << moduleName.getValue();
    return false;
  }
  gpu::ObjectAttr object = getSelectedObject(binary);
  if (!object) {
    launch.emitError("cannot launch from gpu.binary @")
            .append(moduleName.getValue(),
                    ": it has no object that its offloading handler selects")
            .attachNote(binary.getLoc())
        << "the binary";
    valid = false;
  } else if (object.getFormat() == gpu::CompilationTarget::Offload) {
    launch.emitError("cannot launch from gpu.binary @")
            .append(moduleName.getValue(),
                    ": its object is LLVM bitcode (format offload), which "
                    "cudaLibraryLoadData cannot load; use format isa, bin or "
                    "fatbin")
            .attachNote(binary.getLoc())
        << "the binary";
    valid = false;
  }
  if (launch.hasClusterSize()) {
    launch.emitError("cannot lower a cluster launch: cudaLaunchKernel takes "
                     "no cluster size");
    valid = false;
  }
  if (launch.getAsyncObject()) {
    launch.emitError("cannot lower the async object of 'gpu.launch_func': "
                     "launches run on the function's stream");
    valid = false;
  }
  for (Value operand : launch.getKernelOperands()) {
    Type type = operand.getType();
    if (isa<UnrankedMemRefType>(type)) {
      launch.emitError("cannot pass the unranked memref ")
          << type << " to a kernel; cast it to a ranked memref first";
      valid = false;
    } else if (auto memref = dyn_cast<MemRefType>(type);
               memref && barePointers &&
               (!memref.hasStaticShape() || !memref.getLayout().isIdentity())) {
      // As upstream's gpu-to-llvm with use-bare-pointers-for-kernels: the
      // kernel gets no sizes, strides or offset, so they must be known.
      launch.emitError("cannot pass ")
          << type
          << " to a kernel compiled for bare pointers "
             "(use-bare-pointers-for-kernels): its memref arguments must "
             "have a static shape and the identity layout";
      valid = false;
    } else if (!isa<MemRefType, IntegerType, FloatType, IndexType>(type)) {
      launch.emitError("cannot pass a value of type ")
          << type << " to a kernel; supported: memrefs, integers, floats, "
             "index";
      valid = false;
    }
  }
  return valid;
}

HostKernelInputs collectHostKernelInputs(ModuleOp module) {
  HostKernelInputs inputs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kHostKernelAttrName))
      inputs[func.getSymName()] = llvm::to_vector(
          func.getFunctionType().getInputs().drop_front(kNumHostKernelIds));
  return inputs;
}

KernelLowering::KernelLowering(ModuleOp module, SymbolTable &symbols,
                               const HostKernelInputs *barePointerInputs)
    : module(module), symbols(symbols),
      barePointers(barePointerInputs != nullptr) {
  MLIRContext *ctx = module.getContext();
  auto pointerType = LLVM::LLVMPointerType::get(ctx);
  auto i64Type = IntegerType::get(ctx, 64);
  auto i8Type = IntegerType::get(ctx, 8);

  // The host kernels, by binary.
  llvm::StringMap<SmallVector<LLVM::LLVMFuncOp>> hostKernels;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (auto names = func->getAttrOfType<ArrayAttr>(kHostKernelAttrName);
        names && names.size() == 2)
      hostKernels[cast<StringAttr>(names[0]).getValue()].push_back(func);

  OpBuilder builder(ctx);
  auto makeString = [&](StringRef text, StringRef name) {
    std::string bytes = (text + Twine('\0')).str();
    builder.setInsertionPointToEnd(module.getBody());
    auto global = LLVM::GlobalOp::create(
        builder, module.getLoc(), LLVM::LLVMArrayType::get(i8Type, bytes.size()),
        /*isConstant=*/true, LLVM::Linkage::Private, name,
        builder.getStringAttr(bytes));
    symbols.insert(global);
    return global;
  };

  SmallVector<gpu::BinaryOp> toErase;
  for (auto binaryOp : module.getOps<gpu::BinaryOp>()) {
    toErase.push_back(binaryOp);
    gpu::ObjectAttr object = getSelectedObject(binaryOp);
    if (!object)
      continue; // No launch uses it (validated).
    StringRef name = binaryOp.getSymName();
    Location loc = binaryOp.getLoc();
    Binary &binary = binaries[name];
    std::string bytes = object.getObject().getValue().str();
    if (object.getFormat() == gpu::CompilationTarget::Assembly)
      bytes.push_back('\0');

    // The host table: its entries' strings and entry functions first.
    struct Entry {
      LLVM::GlobalOp name, kinds, why;
      LLVM::LLVMFuncOp entry;
    };
    SmallVector<Entry> entries;
    for (LLVM::LLVMFuncOp hostKernel : hostKernels.lookup(name)) {
      auto names = hostKernel->getAttrOfType<ArrayAttr>(kHostKernelAttrName);
      StringRef kernelName = cast<StringAttr>(names[1]).getValue();
      Entry &entry = entries.emplace_back();
      entry.name = getName(binary, kernelName);
      if (auto why = hostKernel->getAttrOfType<StringAttr>(
              kHostKernelUnsupportedAttrName)) {
        entry.why = makeString(why.getValue(), "__etcopy_host_kernel_why");
        hostKernel.erase();
        continue;
      }
      // With bare pointers, a memref's descriptor is rebuilt by the entry
      // from its aligned pointer and its static shape (identity layout,
      // validated at each launch): the simulator passes one pointer.
      ArrayRef<Type> inputs;
      if (barePointerInputs)
        if (auto found = barePointerInputs->find(hostKernel.getName());
            found != barePointerInputs->end())
          inputs = found->second;
      entry.kinds = makeString(getParameterKinds(hostKernel, inputs),
                               "__etcopy_host_kernel_kinds");
      // void entry(void **args, const uint64_t ids[12]): loads the ids and
      // each parameter through its pointer, calls the host kernel.
      builder.setInsertionPointToEnd(module.getBody());
      auto entryType = LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(ctx), {pointerType, pointerType});
      auto function = LLVM::LLVMFuncOp::create(
          builder, hostKernel.getLoc(),
          (hostKernel.getName() + ".entry").str(), entryType,
          LLVM::Linkage::Private);
      symbols.insert(function);
      Block *body = function.addEntryBlock(builder);
      builder.setInsertionPointToStart(body);
      Value args = body->getArgument(0), ids = body->getArgument(1);
      SmallVector<Value> arguments;
      ArrayRef<Type> params = hostKernel.getFunctionType().getParams();
      if (!inputs.empty()) {
        params = params.take_front(kNumHostKernelIds);
        expandBarePointers(builder, loc, args, inputs,
                           hostKernel.getFunctionType().getParams().drop_front(
                               kNumHostKernelIds),
                           arguments);
      }
      for (auto [index, type] : llvm::enumerate(params)) {
        bool isId = index < kNumHostKernelIds;
        Value base = isId ? ids : args;
        int32_t position = isId ? index : index - kNumHostKernelIds;
        Type slotType = isId ? Type(i64Type) : Type(pointerType);
        Value address = LLVM::GEPOp::create(builder, loc, pointerType, slotType,
                                            base, ArrayRef<LLVM::GEPArg>{position});
        Value value = LLVM::LoadOp::create(builder, loc, slotType, address);
        if (!isId)
          value = LLVM::LoadOp::create(builder, loc, type, value);
        else if (type != i64Type)
          value = LLVM::TruncOp::create(builder, loc, type, value);
        arguments.insert(arguments.begin() + index, value);
      }
      LLVM::CallOp::create(builder, loc, hostKernel, arguments);
      LLVM::ReturnOp::create(builder, loc, ValueRange());
      entry.entry = function;
    }

    // The image: the object alone, as CUDA loads it.
    builder.setInsertionPointToEnd(module.getBody());
    binary.image = LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(i8Type, bytes.size()),
        /*isConstant=*/true, LLVM::Linkage::Private,
        ("__etcopy_kernels_" + name).str(), builder.getStringAttr(bytes),
        /*alignment=*/8);
    symbols.insert(binary.image);

    // The table of host kernels, if any, beside it.
    if (!entries.empty()) {
      auto magicType = LLVM::LLVMArrayType::get(i8Type, 8);
      auto entryType = LLVM::LLVMStructType::getLiteral(
          ctx, {pointerType, pointerType, pointerType, pointerType});
      auto entriesType = LLVM::LLVMArrayType::get(entryType, entries.size());
      auto tableType = LLVM::LLVMStructType::getLiteral(
          ctx, {magicType, i64Type, entriesType});
      binary.hostKernels = LLVM::GlobalOp::create(
          builder, loc, tableType, /*isConstant=*/true, LLVM::Linkage::Private,
          ("__etcopy_host_kernels_" + name).str(), Attribute(),
          /*alignment=*/8);
      Block *init =
          builder.createBlock(&binary.hostKernels.getInitializerRegion());
      builder.setInsertionPointToStart(init);
      Value table = LLVM::UndefOp::create(builder, loc, tableType);
      table = LLVM::InsertValueOp::create(
          builder, loc, table,
          LLVM::ConstantOp::create(builder, loc, magicType,
                                   builder.getStringAttr("ETCHOSTK")),
          ArrayRef<int64_t>{0});
      table = LLVM::InsertValueOp::create(
          builder, loc, table,
          LLVM::ConstantOp::create(builder, loc, i64Type,
                                   builder.getI64IntegerAttr(entries.size())),
          ArrayRef<int64_t>{1});
      Value null = LLVM::ZeroOp::create(builder, loc, pointerType);
      auto addressOf = [&](Operation *symbol) -> Value {
        if (!symbol)
          return null;
        if (auto global = dyn_cast<LLVM::GlobalOp>(symbol))
          return LLVM::AddressOfOp::create(builder, loc, global);
        return LLVM::AddressOfOp::create(builder, loc,
                                         cast<LLVM::LLVMFuncOp>(symbol));
      };
      for (auto [index, entry] : llvm::enumerate(entries)) {
        int64_t i = index;
        Operation *fields[] = {entry.name, entry.kinds, entry.entry, entry.why};
        for (auto [field, symbol] : llvm::enumerate(fields))
          table = LLVM::InsertValueOp::create(
              builder, loc, table, addressOf(symbol),
              ArrayRef<int64_t>{2, i, int64_t(field)});
      }
      LLVM::ReturnOp::create(builder, loc, table);
      symbols.insert(binary.hostKernels);
    }

    builder.setInsertionPointToEnd(module.getBody());
    binary.library = LLVM::GlobalOp::create(
        builder, loc, pointerType, /*isConstant=*/false,
        LLVM::Linkage::Internal, ("__etcopy_library_" + name).str(),
        Attribute());
    Block *init = builder.createBlock(&binary.library.getInitializerRegion());
    builder.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(builder, loc,
                           LLVM::ZeroOp::create(builder, loc, pointerType));
    symbols.insert(binary.library);
  }
  // The binaries go; host kernels of a binary without a loadable object
  // (which no launch uses: validated) stay, unused.
  for (gpu::BinaryOp binary : toErase)
    symbols.erase(binary);
}

LLVM::GlobalOp KernelLowering::getName(Binary &binary, StringRef kernel) {
  LLVM::GlobalOp &global = binary.names[kernel];
  if (!global) {
    std::string bytes = (kernel + Twine('\0')).str();
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    global = LLVM::GlobalOp::create(
        builder, module.getLoc(),
        LLVM::LLVMArrayType::get(builder.getI8Type(), bytes.size()),
        /*isConstant=*/true, LLVM::Linkage::Private, "__etcopy_kernel_name",
        builder.getStringAttr(bytes));
    symbols.insert(global);
  }
  return global;
}

LLVM::GlobalOp KernelLowering::getKernelCell(Binary &binary, StringRef kernel,
                                             StringRef binaryName) {
  LLVM::GlobalOp &global = binary.kernels[kernel];
  if (!global) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto pointerType = LLVM::LLVMPointerType::get(module.getContext());
    global = LLVM::GlobalOp::create(
        builder, loc, pointerType, /*isConstant=*/false,
        LLVM::Linkage::Internal,
        ("__etcopy_kernel_" + binaryName + "_" + kernel).str(), Attribute());
    Block *init = builder.createBlock(&global.getInitializerRegion());
    builder.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(builder, loc,
                           LLVM::ZeroOp::create(builder, loc, pointerType));
    symbols.insert(global);
  }
  return global;
}

void KernelLowering::lowerLaunch(OpBuilder &builder, gpu::LaunchFuncOp launch,
                                 ValueRange operands, const OpPlan &plan,
                                 RuntimeSupport &support) {
  Location loc = launch.getLoc();
  FunctionValues &values = plan.function->values;
  auto pointerType = LLVM::LLVMPointerType::get(builder.getContext());
  gpu::LaunchFuncOp::Adaptor adaptor(operands, launch);
  StringRef binaryName = launch.getKernelModuleName().getValue();
  StringRef kernelName = launch.getKernelName().getValue();
  Binary &binary = binaries[binaryName];

  // The parameters: each memref's descriptor fields (its aligned pointer
  // alone for bare-pointer kernels), each scalar.
  SmallVector<Value> parameters;
  for (auto [operand, lowered] :
       llvm::zip_equal(launch.getKernelOperands(), adaptor.getKernelOperands())) {
    auto memref = dyn_cast<MemRefType>(operand.getType());
    if (!memref) {
      parameters.push_back(lowered);
      continue;
    }
    if (barePointers) {
      parameters.push_back(
          values.getField(builder, loc, lowered, ArrayRef<int64_t>{1}));
      continue;
    }
    for (int64_t field = 0; field < 3; ++field)
      parameters.push_back(
          values.getField(builder, loc, lowered, ArrayRef<int64_t>{field}));
    for (int64_t field = 3; field < 5; ++field)
      for (int64_t dim = 0; dim < memref.getRank(); ++dim)
        parameters.push_back(
            values.getField(builder, loc, lowered, {field, dim}));
  }
  // void *args[n]: a pointer to a slot holding each parameter (cudaLaunchKernel
  // copies them before it returns, so the slots are reused by later launches).
  Value args = values.getSlot(
      builder, LLVM::LLVMArrayType::get(pointerType, std::max<size_t>(
                                                         parameters.size(), 1)),
      0);
  for (auto [index, parameter] : llvm::enumerate(parameters)) {
    Value slot = values.getSlot(builder, parameter.getType(), index);
    LLVM::StoreOp::create(builder, loc, parameter, slot);
    Value element = LLVM::GEPOp::create(builder, loc, pointerType, pointerType,
                                        args,
                                        ArrayRef<LLVM::GEPArg>{int32_t(index)});
    LLVM::StoreOp::create(builder, loc, slot, element);
  }

  auto address = [&](LLVM::GlobalOp global) -> Value {
    return LLVM::AddressOfOp::create(builder, loc, global);
  };
  Value name = address(getName(binary, kernelName));
  Value hostKernels =
      binary.hostKernels
          ? address(binary.hostKernels)
          : LLVM::ZeroOp::create(builder, loc, pointerType).getResult();
  SmallVector<Value> getArguments{
      address(binary.library), address(binary.image), hostKernels,
      address(getKernelCell(binary, kernelName, binaryName)), name};
  llvm::append_range(getArguments, plan.location);
  Value kernel = support.call(builder, loc, "__etcopy_get_kernel", getArguments);

  Value shared = adaptor.getDynamicSharedMemorySize();
  if (!shared)
    shared = values.getI32(builder, 0);
  SmallVector<Value> launchArguments{kernel,
                                     name,
                                     adaptor.getGridSizeX(),
                                     adaptor.getGridSizeY(),
                                     adaptor.getGridSizeZ(),
                                     adaptor.getBlockSizeX(),
                                     adaptor.getBlockSizeY(),
                                     adaptor.getBlockSizeZ(),
                                     shared,
                                     plan.stream,
                                     args};
  // Sizes are index values: 64-bit after the conversion, else extended.
  for (Value &size : MutableArrayRef<Value>(launchArguments).slice(2, 6))
    if (size.getType() != builder.getI64Type())
      size = LLVM::ZExtOp::create(builder, loc, builder.getI64Type(), size);
  llvm::append_range(launchArguments, plan.location);
  support.call(builder, loc, "__etcopy_launch_kernel", launchArguments);
}

} // namespace mlir::etcopy::cuda_lowering
