//===- etcopy-opt.cpp - etcopy optimizer driver ---------------*- C++ -*-===//
//
// The etcopy-opt driver: MlirOptMain with every upstream dialect, extension
// and pass, plus the etcopy dialect, its passes, conversions and named
// pipelines (etcopy/Tools/ToolRegistration.h). `--version` names the etcopy
// version and the MLIR it was built against.
//
// It differs from `mlir-opt` in one respect, which changes no output: the
// module is verified once, not twice, before it is printed (see
// VerifiedOutput below).
//
//===----------------------------------------------------------------------===//

#include "etcopy/Tools/ToolRegistration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdio>

using namespace mlir;

namespace {

/// Lets the printer of the output trust the pass manager's verification.
///
/// MLIR's printer verifies an op before printing it in custom form (unless
/// `--mlir-print-assume-verified`), so that invalid IR is printed in generic
/// form rather than handed to custom printers that assume valid IR. After
/// a pipeline run with `--verify-each` on a module verified by the parser,
/// the module is known valid: the pass manager verified it after every pass
/// that did not preserve all analyses, and a pass that preserves them all
/// has not changed it. The printer's verification then repeats the last
/// one: on the LLVM-dialect output of `--etcopy-to-cuda` it was 6 % of the
/// whole command on `groups-memref` (docs/CompileTime.md).
///
/// After the last pass of the top-level pipeline succeeds, and only then,
/// this sets the printer's `--mlir-print-assume-verified` option, which
/// `MlirOptMain` reads when it prints the output; the next pipeline (the
/// next chunk of `--split-input-file`) first clears it, so that ops printed
/// in its diagnostics are verified first. Installed only when the pass
/// manager and the parser verify and the option was not given.
class VerifiedOutput : public PassInstrumentation {
public:
  VerifiedOutput(PassManager &pm, llvm::cl::opt<bool> &assumeVerified)
      : pm(pm), assumeVerified(assumeVerified) {
    assumeVerified.setValue(false);
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    // The top-level pipeline runs on the parsed op, which has no parent; its
    // last pass is looked up now, as the pass manager merges adjacent
    // adaptors of its pipeline when the run starts.
    if (op->getParentOp() || pm.getPasses().empty() ||
        pass != &*std::prev(pm.getPasses().end()))
      return;
    assumeVerified.setValue(true);
  }

private:
  PassManager &pm;
  llvm::cl::opt<bool> &assumeVerified;
};

/// The printer's `--mlir-print-assume-verified` option when the output may
/// trust the pass manager's verification: it was not given, and both the
/// parser and the pass manager verify.
llvm::cl::opt<bool> *getAssumeVerifiedOption(const MlirOptMainConfig &config) {
  if (!config.shouldVerifyPasses() || !config.shouldVerifyOnParsing())
    return nullptr;
  llvm::cl::Option *option =
      llvm::cl::getRegisteredOptions().lookup("mlir-print-assume-verified");
  if (!option || option->getNumOccurrences())
    return nullptr;
  // registerAsmPrinterCLOptions declares it as a cl::opt<bool>.
  return static_cast<llvm::cl::opt<bool> *>(option);
}

/// mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry),
/// with VerifiedOutput installed on the pass manager.
LogicalResult optMain(int argc, char **argv, StringRef inputFilename,
                      StringRef outputFilename, DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Upstream lists what is registered.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return MlirOptMain(argc, argv, inputFilename, outputFilename, registry);

  llvm::InitLLVM initLLVM(argc, argv);
  if (llvm::cl::opt<bool> *assumeVerified = getAssumeVerifiedOption(config)) {
    MlirOptMainConfig commandLine = config;
    config.setPassPipelineSetupFn([commandLine, assumeVerified](
                                      PassManager &pm) -> LogicalResult {
      if (failed(commandLine.setupPassPipeline(pm)))
        return failure();
      pm.addInstrumentation(
          std::make_unique<VerifiedOutput>(pm, *assumeVerified));
      return success();
    });
  }

  if (inputFilename == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return failure();
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return failure();
  output->keep();
  return success();
}

} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  etcopy::registerToolDialects(registry);
  etcopy::registerToolPasses();
  etcopy::registerToolVersionPrinter();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "etcopy optimizer driver\n", registry);
  return asMainReturnCode(
      optMain(argc, argv, inputFilename, outputFilename, registry));
}
