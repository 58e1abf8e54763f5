//===- Pipelines.h - etcopy named pass pipelines --------------*- C++ -*-===//
//
// The end-to-end pipelines: --etcopy-to-cuda (CUDA Runtime calls) and
// --etcopy-to-host (the CPU reference semantics), with their options, as
// functions that fill an OpPassManager for embedding compilers and as
// registered named pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_PIPELINES_H
#define ETCOPY_PIPELINES_H

#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Support/PassOptions.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
class OpPassManager;
namespace etcopy {

/// The object --etcopy-to-cuda makes of each gpu.module
/// (gpu-module-to-binary's format): PTX, which the driver compiles when it
/// loads it; a cubin (ptxas at compile time); a fatbin.
enum class KernelObjectFormat { Isa, Bin, Fatbin };

/// Prints the option spelling of `format` ("isa", "bin", "fatbin").
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     KernelObjectFormat format) {
  switch (format) {
  case KernelObjectFormat::Isa:
    return os << "isa";
  case KernelObjectFormat::Bin:
    return os << "bin";
  case KernelObjectFormat::Fatbin:
    return os << "fatbin";
  }
  return os;
}

} // namespace etcopy
} // namespace mlir

ETCOPY_DECLARE_ENUM_OPTION_PARSER(::mlir::etcopy::KernelObjectFormat)

namespace mlir {
namespace etcopy {

/// The default of the pipelines' upload-group-bytes: the host inputs of a
/// step of a model (positions, masks, indices) fit, and grouping holds at
/// most this much device memory longer per group.
constexpr uint64_t kDefaultUploadGroupBytes = 1 << 20;

/// Pipeline options whose bad values are reported through
/// OptionErrorScope (to the parser's caller), not on stderr.
using BoolPipelineOption =
    ::mlir::detail::PassOptions::Option<bool, BoolOptionParser>;
using IntegerPipelineOption =
    ::mlir::detail::PassOptions::Option<uint64_t, IntegerOptionParser>;
template <typename EnumT>
using EnumPipelineOption =
    ::mlir::detail::PassOptions::Option<EnumT, EnumOptionParser<EnumT>>;

/// The placement stages both pipelines share. A template so that each
/// pipeline's options are one PassPipelineOptions struct; `Derived` names
/// its pipeline (`static StringRef getPipelineName()`).
template <typename Derived>
struct PlacementPipelineOptions : public PassPipelineOptions<Derived> {
  /// Parses the textual options of the pipeline (MLIR's syntax:
  /// `plan-memory=false arena-ownership=caller`) over the current values.
  /// Unlike PassOptions::parseFromString, which this hides, every error is
  /// one line on `errorStream`: an unknown name comes with the nearest
  /// valid one and the list of valid ones, a comma between options is
  /// reported as such, a bad value names the option and the pipeline. A bad
  /// name or separator fails before any option is set, a bad value after
  /// the options before it are.
  LogicalResult parseFromString(StringRef text,
                                raw_ostream &errorStream = llvm::errs()) {
    std::vector<OptionSpelling> spellings;
    for (const auto &[name, option] : this->OptionsMap)
      spellings.push_back(
          {name.str(), /*needsValue=*/option->getValueExpectedFlag() ==
                           llvm::cl::ValueRequired});
    llvm::sort(spellings, [](const OptionSpelling &a, const OptionSpelling &b) {
      return a.name < b.name;
    });
    return parseOptions(Derived::getPipelineName(), *this, spellings, text,
                        errorStream);
  }

  BoolPipelineOption placeCopies{
      *this, "place-copies",
      llvm::cl::desc("Run etcopy-propagate-device: insert the copies at "
                     "delegate boundaries and propagate devices into types "
                     "(default: true)"),
      llvm::cl::init(true)};
  BoolPipelineOption skipH2DForMethodInputs{
      *this, "skip-h2d-for-method-inputs",
      llvm::cl::desc("With place-copies: leave method arguments consumed "
                     "only by delegates of one device on that device "
                     "(default: false)"),
      llvm::cl::init(false)};
  BoolPipelineOption skipD2HForMethodOutputs{
      *this, "skip-d2h-for-method-outputs",
      llvm::cl::desc("With place-copies: return method results produced on "
                     "a device without copying them to the host "
                     "(default: false)"),
      llvm::cl::init(false)};
  BoolPipelineOption optimizeTransfers{
      *this, "optimize-transfers",
      llvm::cl::desc("Run etcopy-optimize-transfers and the canonicalizer "
                     "before bufferization: remove every needless copy "
                     "(default: true)"),
      llvm::cl::init(true)};
  IntegerPipelineOption uploadGroupBytes{
      *this, "upload-group-bytes",
      llvm::cl::desc("With optimize-transfers: move small uploads up to the "
                     "previous upload to their device, at most this many "
                     "bytes per group, so that they are issued in one batch "
                     "(default: 1048576; 0: off)"),
      llvm::cl::init(kDefaultUploadGroupBytes)};
};

/// Options of --etcopy-to-host.
struct EtCopyHostPipelineOptions
    : public PlacementPipelineOptions<EtCopyHostPipelineOptions> {
  static StringRef getPipelineName() { return "etcopy-to-host"; }
};

/// Options of --etcopy-to-cuda. The defaults run the whole job on a model
/// method: placement, transfer optimisation, bufferization under the
/// delegate contract, memory planning, async lowering.
struct EtCopyPipelineOptions
    : public PlacementPipelineOptions<EtCopyPipelineOptions> {
  static StringRef getPipelineName() { return "etcopy-to-cuda"; }

  BoolPipelineOption planMemory{
      *this, "plan-memory",
      llvm::cl::desc("Run etcopy-plan-device-memory after bufferization: "
                     "one arena per device and function (default: true)"),
      llvm::cl::init(true)};
  EnumPipelineOption<ArenaOwnership> arenaOwnership{
      *this, "arena-ownership",
      llvm::cl::desc("With plan-memory: who allocates the arenas "
                     "(default: function)"),
      llvm::cl::init(ArenaOwnership::Function),
      llvm::cl::values(
          clEnumValN(ArenaOwnership::Function, "function",
                     "the function, at entry, freed before each return"),
          clEnumValN(ArenaOwnership::Caller, "caller",
                     "the caller, passed as leading arguments"))};
  BoolPipelineOption async{
      *this, "async",
      llvm::cl::desc("Lower copies to stream-ordered async CUDA calls, the "
                     "host waiting only where it observes their data "
                     "(default: true; false: every copy completes before "
                     "the next op)"),
      llvm::cl::init(true)};
  BoolPipelineOption batchCopies{
      *this, "batch-copies",
      llvm::cl::desc("Lower each run of independent copies on one stream to "
                     "one cudaMemcpyBatchAsync (default: true)"),
      llvm::cl::init(true)};
  BoolPipelineOption pinnedHostMemory{
      *this, "pinned-host-memory",
      llvm::cl::desc("Allocate the host buffers that a function copies to or "
                     "from a device and frees itself with cudaMallocHost "
                     "(default: true)"),
      llvm::cl::init(true)};
  BoolPipelineOption cudaGraphs{
      *this, "cuda-graphs",
      llvm::cl::desc("Capture the stream work of each function whose work is "
                     "stream-ordered into a CUDA graph at its first call and "
                     "replay it with one cudaGraphLaunch while its inputs "
                     "stay the same (default: false)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<std::string> kernelChip{
      *this, "kernel-chip",
      llvm::cl::desc("The GPU architecture the gpu.module kernels are "
                     "compiled for (nvvm-attach-target's chip; default: "
                     "sm_90)"),
      llvm::cl::init("sm_90")};
  EnumPipelineOption<KernelObjectFormat> kernelFormat{
      *this, "kernel-format",
      llvm::cl::desc("The object made of each gpu.module "
                     "(gpu-module-to-binary's format; default: isa)"),
      llvm::cl::init(KernelObjectFormat::Isa),
      llvm::cl::values(
          clEnumValN(KernelObjectFormat::Isa, "isa",
                     "PTX, compiled by the driver when it is loaded"),
          clEnumValN(KernelObjectFormat::Bin, "bin",
                     "a cubin, compiled by ptxas at compile time"),
          clEnumValN(KernelObjectFormat::Fatbin, "fatbin", "a fatbin"))};
  BoolPipelineOption useBarePointersForKernels{
      *this, "use-bare-pointers-for-kernels",
      llvm::cl::desc("Compile the kernels with bare pointers for memrefs "
                     "(convert-gpu-to-nvvm's use-bare-ptr-memref-call-conv) "
                     "and launch them so; memref kernel arguments must have "
                     "a static shape and the identity layout (default: "
                     "false)"),
      llvm::cl::init(false)};
};

/// From tensor- or memref-level IR with delegates or etcopy ops to the LLVM
/// dialect with checked CUDA Runtime API calls.
void buildEtCopyToCUDAPipeline(OpPassManager &pm,
                               const EtCopyPipelineOptions &options);
/// Same, with the default options.
void buildEtCopyToCUDAPipeline(OpPassManager &pm);

/// From tensor- or memref-level IR with delegates or etcopy ops to host-only
/// LLVM dialect code: copies are host copies, placements are erased.
void buildEtCopyToHostPipeline(OpPassManager &pm,
                               const EtCopyHostPipelineOptions &options);
/// Same, with the default options.
void buildEtCopyToHostPipeline(OpPassManager &pm);

/// Registers both as --etcopy-to-cuda and --etcopy-to-host.
void registerPipelines();

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_PIPELINES_H
