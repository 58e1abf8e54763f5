//===- HostKernels.cpp - Host versions of gpu.module kernels ----*- C++ -*-===//
//
// etcopy-outline-host-kernels: each kernel of each gpu.module gets a host
// version, a func.func taking the ids and sizes of the grid before the
// kernel's arguments (for the CUDA simulator, and for the reference build
// with launch-on-host, where launches become loops calling it); then the
// gpu.modules are made ready for convert-gpu-to-nvvm (no #etcopy.device
// memory space left in them, launches cast to match).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Conversion/Passes.h"

#include "../GPUToCUDARuntime/HostKernelABI.h"
#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYOUTLINEHOSTKERNELS
#include "etcopy/Conversion/Passes.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

namespace {

/// Why `kernel` cannot run one thread after another on the host, or an
/// empty string.
std::string getUnsupportedReason(gpu::GPUFuncOp kernel) {
  if (!kernel.getWorkgroupAttributions().empty())
    return "it uses shared memory (workgroup attributions), which needs the "
           "threads of a block to run together";
  if (!kernel.getPrivateAttributions().empty())
    return "it uses private attributions";
  std::string why;
  kernel.walk([&](Operation *op) {
    if (op == kernel)
      return WalkResult::advance();
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::GlobalIdOp, gpu::ReturnOp>(op))
      return WalkResult::advance();
    if (isa<gpu::BarrierOp>(op)) {
      why = "it uses gpu.barrier, which needs the threads of a block to run "
            "together";
      return WalkResult::interrupt();
    }
    if (isa_and_present<gpu::GPUDialect>(op->getDialect())) {
      why = ("it uses '" + op->getName().getStringRef() +
             "' (warp, subgroup and other gpu operations have no host "
             "version)")
                .str();
      return WalkResult::interrupt();
    }
    if (isa<CallOpInterface>(op)) {
      why = ("it calls a function ('" + op->getName().getStringRef() + "')")
                .str();
      return WalkResult::interrupt();
    }
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto memref = dyn_cast<BaseMemRefType>(type))
        if (auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
                memref.getMemorySpace());
            space && space.getValue() != gpu::AddressSpace::Global) {
          llvm::raw_string_ostream(why)
              << "it uses shared or private memory (" << type << ")";
          return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  return why;
}

/// `type` without an #etcopy.device memory space, if it has one.
std::optional<Type> withoutDeviceSpace(MemRefType type) {
  if (!isa_and_present<DeviceAttr>(type.getMemorySpace()))
    return std::nullopt;
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

/// Erases the #etcopy.device memory space from every type in `op`.
void stripDeviceSpaces(Operation *op) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [](MemRefType type) { return withoutDeviceSpace(type); });
  replacer.recursivelyReplaceElementsIn(op, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

/// Creates the host version of `kernel` of `gpuModule` at the end of
/// `module`: the kernel's body with the ids read from the leading
/// arguments, or an empty body marked with why it has none.
func::FuncOp outlineKernel(ModuleOp module, SymbolTable &symbols,
                           gpu::GPUModuleOp gpuModule, gpu::GPUFuncOp kernel) {
  MLIRContext *ctx = module.getContext();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Location loc = kernel.getLoc();
  SmallVector<Type> inputs(kNumHostKernelIds, builder.getIndexType());
  llvm::append_range(inputs, kernel.getArgumentTypes());
  auto func = func::FuncOp::create(
      builder, loc,
      ("__etcopy_host_kernel." + gpuModule.getName() + "." + kernel.getName())
          .str(),
      FunctionType::get(ctx, inputs, {}));
  // Private: no method of the module (its table entry is its only use).
  func.setPrivate();
  symbols.insert(func);
  func->setAttr(kHostKernelAttrName,
                builder.getStrArrayAttr({gpuModule.getName(), kernel.getName()}));
  std::string why = getUnsupportedReason(kernel);
  if (!why.empty()) {
    func->setAttr(kHostKernelUnsupportedAttrName, builder.getStringAttr(why));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToStart(body);
    func::ReturnOp::create(builder, loc);
    stripDeviceSpaces(func);
    return func;
  }

  IRMapping mapping;
  kernel.getBody().cloneInto(&func.getBody(), mapping);
  Block &entry = func.getBody().front();
  SmallVector<Value> ids;
  for (unsigned i = 0; i < kNumHostKernelIds; ++i)
    ids.push_back(entry.insertArgument(i, builder.getIndexType(), loc));
  auto getId = [&](unsigned base, gpu::Dimension dimension) {
    return ids[base + static_cast<unsigned>(dimension)];
  };
  SmallVector<Operation *> toReplace;
  func.walk([&](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::GlobalIdOp, gpu::ReturnOp>(op))
      toReplace.push_back(op);
  });
  for (Operation *op : toReplace) {
    builder.setInsertionPoint(op);
    Value replacement =
        TypeSwitch<Operation *, Value>(op)
            .Case([&](gpu::BlockIdOp id) { return getId(0, id.getDimension()); })
            .Case(
                [&](gpu::ThreadIdOp id) { return getId(3, id.getDimension()); })
            .Case(
                [&](gpu::BlockDimOp id) { return getId(6, id.getDimension()); })
            .Case([&](gpu::GridDimOp id) { return getId(9, id.getDimension()); })
            .Case([&](gpu::GlobalIdOp id) -> Value {
              Value offset = arith::MulIOp::create(
                  builder, id.getLoc(), getId(0, id.getDimension()),
                  getId(6, id.getDimension()));
              return arith::AddIOp::create(builder, id.getLoc(), offset,
                                           getId(3, id.getDimension()));
            })
            .Case([&](gpu::ReturnOp ret) -> Value {
              func::ReturnOp::create(builder, ret.getLoc());
              return Value();
            });
    if (replacement)
      op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  // A kernel sees device memory as plain memory; so does its host version
  // (the simulator maps device pointers to the host's view of them).
  stripDeviceSpaces(func);
  return func;
}

/// Replaces the sync-form `launch` by loops over the grid and the block
/// calling `host`, its memrefs cast to the host version's types.
LogicalResult replaceWithHostLoops(gpu::LaunchFuncOp launch,
                                   func::FuncOp host) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitError("cannot run an async 'gpu.launch_func' on the "
                            "host; use its sync form");
  OpBuilder builder(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value bounds[] = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
  Value indices[6];
  for (auto [position, bound] : llvm::enumerate(bounds)) {
    auto loop = scf::ForOp::create(builder, loc, zero, bound, one);
    indices[position] = loop.getInductionVar();
    builder.setInsertionPointToStart(loop.getBody());
  }
  SmallVector<Value> arguments{indices[2], indices[1], indices[0],
                               indices[5], indices[4], indices[3],
                               block.x,    block.y,    block.z,
                               grid.x,     grid.y,     grid.z};
  for (auto [operand, type] :
       llvm::zip_equal(launch.getKernelOperands(),
                       host.getArgumentTypes().drop_front(kNumHostKernelIds)))
    arguments.push_back(operand.getType() == type
                            ? operand
                            : memref::MemorySpaceCastOp::create(
                                  builder, loc, type, operand)
                                  .getResult());
  func::CallOp::create(builder, loc, host, arguments);
  launch.erase();
  return success();
}

struct EtCopyOutlineHostKernelsPass
    : public etcopy::impl::EtCopyOutlineHostKernelsBase<
          EtCopyOutlineHostKernelsPass> {
  using EtCopyOutlineHostKernelsBase::EtCopyOutlineHostKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty()) {
      markAllAnalysesPreserved();
      return;
    }
    SymbolTable symbols(module);
    // Host versions, by module and kernel name.
    DenseMap<std::pair<StringAttr, StringAttr>, func::FuncOp> hostKernels;
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel())
          hostKernels[{gpuModule.getNameAttr(), kernel.getNameAttr()}] =
              outlineKernel(module, symbols, gpuModule, kernel);

    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });

    if (launchOnHost) {
      bool failed = false;
      for (gpu::LaunchFuncOp launch : launches) {
        func::FuncOp host = hostKernels.lookup(
            {launch.getKernelModuleName(), launch.getKernelName()});
        if (!host) {
          launch.emitError("no kernel @")
              << launch.getKernelModuleName().getValue() << "::@"
              << launch.getKernelName().getValue() << " in a gpu.module";
          failed = true;
          continue;
        }
        if (auto why =
                host->getAttrOfType<StringAttr>(kHostKernelUnsupportedAttrName)) {
          launch.emitError("cannot run kernel @")
              << launch.getKernelModuleName().getValue() << "::@"
              << launch.getKernelName().getValue()
              << " on the host: " << why.getValue();
          failed = true;
          continue;
        }
        failed |= ::mlir::failed(replaceWithHostLoops(launch, host));
      }
      if (failed)
        return signalPassFailure();
      // The unsupported kernels' empty versions are not needed either.
      for (auto [key, host] : hostKernels)
        if (host->hasAttr(kHostKernelUnsupportedAttrName))
          host.erase();
      for (gpu::GPUModuleOp gpuModule : gpuModules)
        gpuModule.erase();
      return;
    }

    // No #etcopy.device memory space in the gpu.modules, and launches cast
    // to match.
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      stripDeviceSpaces(gpuModule);
    for (gpu::LaunchFuncOp launch : launches) {
      OpBuilder builder(launch);
      for (OpOperand &operand : launch.getKernelOperandsMutable()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        std::optional<Type> stripped =
            type ? withoutDeviceSpace(type) : std::nullopt;
        if (!stripped)
          continue;
        operand.set(memref::MemorySpaceCastOp::create(
            builder, launch.getLoc(), *stripped, operand.get()));
      }
    }
  }
};

} // namespace
