//===- CAPI.cpp - C API of etcopy -----------------------------*- C++ -*-===//
//
// Implements include/etcopy-c: the dialect handle and #etcopy.device, and the
// registration and pipelines of etcopy over MLIR's C API. Built into
// libEtCopyCAPI.so, over libEtCopyMLIRCAPIIR.so (upstream's IR C API, which
// Debian ships only as a static archive) and the shared libMLIR.so.
//
//===----------------------------------------------------------------------===//

#include "etcopy-c/Dialects.h"
#include "etcopy-c/Pipelines.h"

#include "etcopy/Dialect/EtCopy/EtCopyDialect.h"
#include "etcopy/InitAll.h"
#include "etcopy/Pipelines.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <cstring>
#include <mutex>

using namespace mlir;
// The C options struct has the name of the C++ one: etcopy names are
// qualified here.
using etcopy::ArenaOwnership;
using etcopy::DeviceAttr;
using etcopy::DeviceKind;
using etcopy::EtCopyDialect;

//===----------------------------------------------------------------------===//
// Traits' TypeIDs
//===----------------------------------------------------------------------===//

/// Makes libMLIR.so's code, compiled by clang, the first to resolve the
/// TypeIDs of the traits whose TypeIDs upstream's IR C API holds its own
/// copies of: OpTrait::IsTerminator (mlirBlockGetTerminator),
/// OpTrait::SymbolTable (mlirSymbolTableCreate) and
/// OpTrait::IsIsolatedFromAbove (mlirAsmStateCreateForValue). Called by
/// every function here that lets etcopy's code reach IR (registration,
/// dialect loading, pipelines), before it does.
///
/// MLIR registers these TypeIDs by their type's name, which the compiler
/// writes: GCC spells `OpTrait::IsTerminator<Empty>` differently from
/// clang. libEtCopyMLIRCAPIIR.so's copies always resolve clang's spelling;
/// the copy that etcopy's code shares with libMLIR.so takes the spelling of
/// whichever code resolves it first. Were it etcopy's code compiled by GCC
/// (as when convert-etcopy-to-gpu runs on a module built through the C API
/// and never verified), mlirBlockGetTerminator would find no terminator
/// (test/CAPI/trait-order.test). Asked for any trait, an op's trait table
/// resolves every trait it lists (op_definition_impl::hasTrait in
/// mlir/IR/OpDefinition.h), in the code that defines the op: here
/// func.return's and builtin.module's, in libMLIR.so. Nothing to do when
/// etcopy is compiled by clang, which spells the names as libMLIR.so does.
static void resolveTraitTypeIDsInMLIR() {
#ifndef __clang__
  static std::once_flag once;
  std::call_once(once, [] {
    MLIRContext context(MLIRContext::Threading::DISABLED);
    context.loadDialect<func::FuncDialect>();
    for (StringRef name :
         {func::ReturnOp::getOperationName(), ModuleOp::getOperationName()})
      (void)RegisteredOperationName::lookup(name, &context)
          ->hasTrait(TypeID::get<ModuleOp>());
  });
#endif
}

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

/// The dialect handle inserts and loads the dialect with its interface
/// models, which MLIR_DEFINE_CAPI_DIALECT_REGISTRATION would leave out.
static void insertEtCopyDialect(MlirDialectRegistry registry) {
  resolveTraitTypeIDsInMLIR();
  etcopy::registerAllDialects(*unwrap(registry));
}

static MlirDialect loadEtCopyDialect(MlirContext context) {
  resolveTraitTypeIDsInMLIR();
  DialectRegistry registry;
  etcopy::registerAllDialects(registry);
  unwrap(context)->appendDialectRegistry(registry);
  return wrap(unwrap(context)->getOrLoadDialect<EtCopyDialect>());
}

static MlirStringRef getEtCopyDialectNamespace() {
  return wrap(EtCopyDialect::getDialectNamespace());
}

MlirDialectHandle mlirGetDialectHandle__etcopy__() {
  static MlirDialectRegistrationHooks hooks = {
      insertEtCopyDialect, loadEtCopyDialect, getEtCopyDialectNamespace};
  return MlirDialectHandle{&hooks};
}

//===----------------------------------------------------------------------===//
// #etcopy.device
//===----------------------------------------------------------------------===//

bool etcopyAttributeIsADevice(MlirAttribute attr) {
  return isa_and_nonnull<DeviceAttr>(unwrap(attr));
}

MlirAttribute etcopyDeviceAttrGet(MlirContext ctx, EtCopyDeviceKind kind,
                                  unsigned ordinal) {
  resolveTraitTypeIDsInMLIR();
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<EtCopyDialect>();
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(context)); };
  std::optional<DeviceKind> deviceKind =
      etcopy::symbolizeDeviceKind(static_cast<uint32_t>(kind));
  if (!deviceKind) {
    emitError() << "unknown device kind value " << static_cast<int>(kind);
    return MlirAttribute{nullptr};
  }
  return wrap(DeviceAttr::getChecked(emitError, context, *deviceKind,
                                     ordinal));
}

EtCopyDeviceKind etcopyDeviceAttrGetKind(MlirAttribute attr) {
  return static_cast<EtCopyDeviceKind>(cast<DeviceAttr>(unwrap(attr)).getKind());
}

unsigned etcopyDeviceAttrGetOrdinal(MlirAttribute attr) {
  return cast<DeviceAttr>(unwrap(attr)).getOrdinal();
}

bool etcopyDeviceAttrIsHost(MlirAttribute attr) {
  return cast<DeviceAttr>(unwrap(attr)).isHost();
}

MlirTypeID etcopyDeviceAttrGetTypeID(void) {
  return wrap(DeviceAttr::getTypeID());
}

//===----------------------------------------------------------------------===//
// Passes and pipelines
//===----------------------------------------------------------------------===//

void etcopyRegisterPasses(void) {
  resolveTraitTypeIDsInMLIR();
  // Named pipelines may be registered only once per process.
  static bool registered = (etcopy::registerAllPasses(), true);
  (void)registered;
}

void etcopyRegisterPipelineDependencies(MlirDialectRegistry registry) {
  resolveTraitTypeIDsInMLIR();
  etcopy::registerPipelineDependencies(*unwrap(registry));
}

/// The C options with the values of `from`; a chip name too long for C
/// fails.
static FailureOr<EtCopyPipelineOptions>
toCOptions(const etcopy::EtCopyPipelineOptions &from) {
  EtCopyPipelineOptions to{
      from.placeCopies,
      from.skipH2DForMethodInputs,
      from.skipD2HForMethodOutputs,
      from.optimizeTransfers,
      from.planMemory,
      from.arenaOwnership == ArenaOwnership::Caller
          ? EtCopyArenaOwnershipCaller
          : EtCopyArenaOwnershipFunction,
      from.async,
      from.batchCopies,
      from.pinnedHostMemory,
      from.uploadGroupBytes,
      {},
      from.kernelFormat == etcopy::KernelObjectFormat::Bin
          ? EtCopyKernelFormatBin
          : from.kernelFormat == etcopy::KernelObjectFormat::Fatbin
                ? EtCopyKernelFormatFatbin
                : EtCopyKernelFormatIsa,
      from.cudaGraphs,
      from.useBarePointersForKernels,
  };
  const std::string &chip = from.kernelChip.getValue();
  if (chip.size() >= ETCOPY_KERNEL_CHIP_SIZE)
    return failure();
  std::memcpy(to.kernelChip, chip.c_str(), chip.size() + 1);
  return to;
}

EtCopyPipelineOptions etcopyPipelineOptionsGetDefault(void) {
  return *toCOptions(etcopy::EtCopyPipelineOptions());
}

/// Reports `message` to `callback` in one call (none when it is NULL).
static void report(StringRef message, MlirStringCallback callback,
                   void *userData) {
  if (callback)
    callback(wrap(message), userData);
}

/// Checks what the C types cannot: that the enumerations hold one of their
/// values.
static LogicalResult verifyOptions(const EtCopyPipelineOptions &options,
                                   MlirStringCallback callback,
                                   void *userData) {
  // Read as the integer C stored: in C++ a value outside the enumerators'
  // range is not a valid EtCopyArenaOwnership, and loading it as one is
  // undefined behaviour (UBSan's -fsanitize=enum reports it).
  static_assert(sizeof(int) == sizeof(EtCopyArenaOwnership),
                "C enumerations are int-sized");
  int arenaOwnership, kernelFormat;
  std::memcpy(&arenaOwnership, &options.arenaOwnership, sizeof(int));
  std::memcpy(&kernelFormat, &options.kernelFormat, sizeof(int));
  std::string message;
  llvm::raw_string_ostream os(message);
  if (arenaOwnership != EtCopyArenaOwnershipFunction &&
      arenaOwnership != EtCopyArenaOwnershipCaller)
    os << "EtCopyPipelineOptions: arenaOwnership is " << arenaOwnership
       << ", expected EtCopyArenaOwnershipFunction (0) or "
          "EtCopyArenaOwnershipCaller (1)\n";
  else if (kernelFormat < EtCopyKernelFormatIsa ||
           kernelFormat > EtCopyKernelFormatFatbin)
    os << "EtCopyPipelineOptions: kernelFormat is " << kernelFormat
       << ", expected EtCopyKernelFormatIsa (0), EtCopyKernelFormatBin (1) "
          "or EtCopyKernelFormatFatbin (2)\n";
  else if (!std::memchr(options.kernelChip, 0, ETCOPY_KERNEL_CHIP_SIZE) ||
           !options.kernelChip[0])
    os << "EtCopyPipelineOptions: kernelChip is empty or not NUL-terminated "
          "within "
       << ETCOPY_KERNEL_CHIP_SIZE << " bytes\n";
  else
    return success();
  report(message, callback, userData);
  return failure();
}

/// Copies the placement options, which both pipelines have, from C.
template <typename OptionsT>
static void copyPlacementOptions(const EtCopyPipelineOptions &from,
                                 OptionsT &to) {
  to.placeCopies = from.placeCopies;
  to.skipH2DForMethodInputs = from.skipH2DForMethodInputs;
  to.skipD2HForMethodOutputs = from.skipD2HForMethodOutputs;
  to.optimizeTransfers = from.optimizeTransfers;
  to.uploadGroupBytes = from.uploadGroupBytes;
}

/// The C++ options of --etcopy-to-cuda with the values of `from` (verified).
static void copyOptions(const EtCopyPipelineOptions &from,
                        etcopy::EtCopyPipelineOptions &to) {
  copyPlacementOptions(from, to);
  to.planMemory = from.planMemory;
  to.arenaOwnership = from.arenaOwnership == EtCopyArenaOwnershipCaller
                          ? ArenaOwnership::Caller
                          : ArenaOwnership::Function;
  to.async = from.async;
  to.batchCopies = from.batchCopies;
  to.pinnedHostMemory = from.pinnedHostMemory;
  to.cudaGraphs = from.cudaGraphs;
  to.useBarePointersForKernels = from.useBarePointersForKernels;
  to.kernelChip = std::string(from.kernelChip);
  to.kernelFormat = from.kernelFormat == EtCopyKernelFormatBin
                        ? etcopy::KernelObjectFormat::Bin
                    : from.kernelFormat == EtCopyKernelFormatFatbin
                        ? etcopy::KernelObjectFormat::Fatbin
                        : etcopy::KernelObjectFormat::Isa;
}

MlirLogicalResult etcopyPipelineOptionsParse(MlirStringRef text,
                                             EtCopyPipelineOptions *options,
                                             MlirStringCallback callback,
                                             void *userData) {
  if (failed(verifyOptions(*options, callback, userData)))
    return mlirLogicalResultFailure();
  etcopy::EtCopyPipelineOptions parsed;
  copyOptions(*options, parsed);
  std::string message;
  llvm::raw_string_ostream errors(message);
  if (failed(parsed.parseFromString(unwrap(text), errors))) {
    report(message, callback, userData);
    return mlirLogicalResultFailure();
  }
  FailureOr<EtCopyPipelineOptions> converted = toCOptions(parsed);
  if (failed(converted)) {
    report(("option 'kernel-chip' of 'etcopy-to-cuda': '" +
            parsed.kernelChip.getValue() + "' is longer than " +
            Twine(ETCOPY_KERNEL_CHIP_SIZE - 1) + " characters\n")
               .str(),
           callback, userData);
    return mlirLogicalResultFailure();
  }
  *options = *converted;
  return mlirLogicalResultSuccess();
}

/// Checks that `passManager` runs on modules, as the pipelines' stages do:
/// MLIR aborts when a module pass is added to a pass manager on another op.
static LogicalResult verifyAnchor(StringRef pipeline,
                                  OpPassManager &passManager,
                                  MlirStringCallback callback, void *userData) {
  std::optional<StringRef> anchor = passManager.getOpName();
  if (!anchor || *anchor == ModuleOp::getOperationName())
    return success();
  report(("'" + pipeline + "' runs on '" + ModuleOp::getOperationName() +
          "', it cannot be added to a pass manager on '" + *anchor + "'\n")
             .str(),
         callback, userData);
  return failure();
}

/// The C++ options of --etcopy-to-host with the values of `from` (verified):
/// the placement options, the only ones the host pipeline has.
static void copyOptions(const EtCopyPipelineOptions &from,
                        etcopy::EtCopyHostPipelineOptions &to) {
  copyPlacementOptions(from, to);
}

/// Verifies `options` (the defaults when null) and that `passManager` can
/// hold the pipeline of `OptionsT`, reporting to `callback`, then adds the
/// pipeline with `build`.
template <typename OptionsT>
static MlirLogicalResult
buildPipeline(MlirOpPassManager passManager,
              const EtCopyPipelineOptions *options,
              MlirStringCallback callback, void *userData,
              void (*build)(OpPassManager &, const OptionsT &)) {
  EtCopyPipelineOptions defaults = etcopyPipelineOptionsGetDefault();
  if (!options)
    options = &defaults;
  OpPassManager &pm = *unwrap(passManager);
  if (failed(verifyOptions(*options, callback, userData)) ||
      failed(verifyAnchor(OptionsT::getPipelineName(), pm, callback,
                          userData)))
    return mlirLogicalResultFailure();
  resolveTraitTypeIDsInMLIR();
  OptionsT pipelineOptions;
  copyOptions(*options, pipelineOptions);
  build(pm, pipelineOptions);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult
etcopyBuildToCUDAPipeline(MlirOpPassManager passManager,
                          const EtCopyPipelineOptions *options,
                          MlirStringCallback callback, void *userData) {
  return buildPipeline<etcopy::EtCopyPipelineOptions>(
      passManager, options, callback, userData,
      etcopy::buildEtCopyToCUDAPipeline);
}

MlirLogicalResult
etcopyBuildToHostPipeline(MlirOpPassManager passManager,
                          const EtCopyPipelineOptions *options,
                          MlirStringCallback callback, void *userData) {
  return buildPipeline<etcopy::EtCopyHostPipelineOptions>(
      passManager, options, callback, userData,
      etcopy::buildEtCopyToHostPipeline);
}
