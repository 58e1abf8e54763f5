//===- etcopy-pipeline-fuzzer.cpp - Fuzz etcopy's passes and pipelines ---===//
//
// A libFuzzer target: each input is MLIR text. It is parsed and verified with
// the dialects an embedding compiler registers
// (etcopy::registerPipelineDependencies); a module that parses is then run
// through every pass and named pipeline in MLIR's pass registry (which holds
// exactly what etcopy::registerAllPasses registers, so a pass added there is
// fuzzed without touching this file) and through a few non-default option
// sets of the pipelines.
//
// Failing with a diagnostic is a fine answer to a bad input. A bug is a crash
// (or sanitizer report), a hang, a pass that reports success while it emitted
// an error, or a pass that reports success and leaves IR that does not
// verify: the last two abort here, naming the pass.
//
// Flags after libFuzzer's (which ignores arguments starting with `--`):
//   --etcopy-one-entry-per-input  run one registry entry or option set per
//       input, chosen by a hash of the input, rather than all of them: about
//       as many times more executions per second as there are entries, for
//       long fuzzing runs (utils/fuzz.sh passes it). Replaying inputs without
//       it runs everything on each.
//   --etcopy-list  print the pipelines run on each input, then exit.
//
//===----------------------------------------------------------------------===//

#include "etcopy/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;

/// LLVM's BumpPtrAllocator poisons memory from inline code compiled into
/// etcopy and unpoisons it in the uninstrumented libMLIR.so: without this,
/// ASan reports a false use-after-poison (see docs/Reliability.md).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// Non-default option sets fuzzed besides every registry entry's defaults:
/// the modes of the pipelines and passes that change what they emit.
static const char *const kOptionVariants[] = {
    "etcopy-to-cuda{skip-h2d-for-method-inputs=true "
    "skip-d2h-for-method-outputs=true arena-ownership=caller}",
    "etcopy-to-cuda{async=false plan-memory=false}",
    "etcopy-to-cuda{place-copies=false optimize-transfers=false}",
    "etcopy-to-cuda{kernel-chip=sm_80 kernel-format=isa}",
    "etcopy-to-cuda{cuda-graphs=true}",
    "etcopy-to-cuda{use-bare-pointers-for-kernels=true}",
    "convert-gpu-to-cuda-runtime{cuda-graphs=true pinned-host-memory=true}",
    "etcopy-to-host{skip-h2d-for-method-inputs=true "
    "skip-d2h-for-method-outputs=true optimize-transfers=false}",
    "etcopy-propagate-device{skip-h2d-for-method-inputs=true "
    "skip-d2h-for-method-outputs=true}",
    "etcopy-optimize-transfers{upload-group-bytes=64}",
    "etcopy-plan-device-memory{arena-ownership=caller plan-host=true}",
    "convert-etcopy-to-gpu{async=false memory-space=gpu}",
    "etcopy-outline-host-kernels{launch-on-host=true}",
};

/// MLIR's parser recurses once per level of bracket nesting, with no limit:
/// about 8000 nested `[` overflow an 8 MiB stack, in stock mlir-opt too
/// (docs/Reliability.md, tools/etcopy-fuzz/reproducers/). Inputs nested
/// deeper than this are skipped: the crash is upstream's and would end every
/// fuzzing run. A `>` after `-` is an arrow, not a closing bracket.
static constexpr int kMaxNesting = 1000;

static bool isNestedTooDeeply(llvm::StringRef text) {
  int depth = 0;
  for (size_t i = 0, e = text.size(); i != e; ++i) {
    switch (text[i]) {
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxNesting)
        return true;
      break;
    case '>':
      if (i != 0 && text[i - 1] == '-')
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      depth = std::max(depth - 1, 0);
      break;
    default:
      break;
    }
  }
  return false;
}

/// The custom parsers of linalg.transpose, linalg.broadcast and
/// linalg.reduce in libMLIR.so 22 dereference a null attribute when the list
/// after `permutation =` or `dimensions =` does not parse (`permutation = ,`,
/// an unclosed `[0, 1`): stock mlir-opt-22 crashes too (docs/Reliability.md,
/// tools/etcopy-fuzz/reproducers/). Inputs where such a keyword is followed
/// by anything but a well-formed `[i, j, ...]` are skipped, like deep
/// nesting.
static bool hasMalformedLinalgDimensionList(llvm::StringRef text) {
  if (!text.contains("linalg"))
    return false;
  for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t at = text.find(keyword); at != llvm::StringRef::npos;
         at = text.find(keyword, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + keyword.size()).ltrim();
      if (!rest.consume_front("="))
        continue; // Not the custom syntax (e.g. an attribute name's prefix).
      rest = rest.ltrim();
      if (rest.starts_with("array<"))
        continue; // An attribute, as the generic form prints it: safe.
      if (!rest.consume_front("["))
        return true;
      rest = rest.ltrim();
      if (rest.consume_front("]"))
        continue;
      while (true) {
        size_t start = rest.starts_with("-") ? 1 : 0;
        size_t end = std::min(rest.find_if_not(llvm::isDigit, start),
                              rest.size());
        int64_t value;
        // Digits that do not fit in an i64 fail to parse too.
        if (end == start || rest.take_front(end).getAsInteger(10, value))
          return true;
        rest = rest.drop_front(end).ltrim();
        if (rest.consume_front("]"))
          break;
        if (!rest.consume_front(","))
          return true;
        rest = rest.ltrim();
      }
    }
  }
  return false;
}

namespace {
/// What every input is run through, set up once.
struct FuzzerState {
  DialectRegistry registry;
  /// Textual pipelines nested under builtin.module, one per run.
  std::vector<std::string> pipelines;
  bool oneEntryPerInput = false;
};
} // namespace

static FuzzerState &state() {
  static FuzzerState *fuzzerState = new FuzzerState();
  return *fuzzerState;
}

/// The argument of every pass and pipeline in MLIR's pass registry. The
/// registry has no iteration API of its own; a PassNameCLParser without an
/// argument name registers one command-line option per entry, named after
/// it, and the names it added are the registry's entries.
static std::vector<std::string> registeredPassArguments() {
  auto &options = llvm::cl::getRegisteredOptions();
  llvm::StringSet<> before;
  for (const auto &option : options)
    before.insert(option.first);
  static PassNameCLParser parser("", "etcopy passes and pipelines");
  std::vector<std::string> arguments;
  for (const auto &option : options)
    if (!before.contains(option.first))
      arguments.push_back(option.first.str());
  llvm::sort(arguments);
  return arguments;
}

/// Aborts with the pass and the IR when a pass reports success although it
/// emitted an error or left IR that does not verify.
namespace {
class CheckSuccessfulPasses : public PassInstrumentation {
public:
  explicit CheckSuccessfulPasses(const unsigned &numErrors)
      : numErrors(numErrors) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    errorsBefore.push_back(numErrors);
  }

  void runAfterPassFailed(Pass *pass, Operation *op) override {
    errorsBefore.pop_back();
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    unsigned before = errorsBefore.pop_back_val();
    if (numErrors != before)
      fail(pass, op, "reported success after emitting an error");
    // Print the verifier's diagnostics only when it fails.
    if (succeeded(verify(op)))
      return;
    ScopedDiagnosticHandler print(op->getContext(), [](Diagnostic &diag) {
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
      for (const Diagnostic &note : diag.getNotes())
        llvm::errs() << note.getLocation() << ": note: " << note << "\n";
      return success();
    });
    (void)verify(op);
    fail(pass, op, "reported success but left IR that does not verify");
  }

private:
  [[noreturn]] static void fail(Pass *pass, Operation *op, const char *what) {
    llvm::errs() << "etcopy-pipeline-fuzzer: pass '" << pass->getArgument()
                 << "' (" << pass->getName() << ") " << what << ":\n";
    op->print(llvm::errs(), OpPrintingFlags().assumeVerified());
    llvm::errs() << "\n";
    std::abort();
  }

  const unsigned &numErrors;
  llvm::SmallVector<unsigned> errorsBefore;
};
} // namespace

/// Runs `pipeline` on a copy of `module`.
static void runPipeline(ModuleOp module, const std::string &pipeline,
                        const unsigned &numErrors) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  // CheckSuccessfulPasses verifies after each pass that succeeded, so that a
  // failure is told apart from a pass that failed by itself.
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<CheckSuccessfulPasses>(numErrors));
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs()))) {
    llvm::errs() << "etcopy-pipeline-fuzzer: cannot build '" << pipeline
                 << "'\n";
    std::abort();
  }
  (void)pm.run(*copy);
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  FuzzerState &fuzzer = state();
  etcopy::registerPipelineDependencies(fuzzer.registry);
  for (const std::string &argument : registeredPassArguments())
    fuzzer.pipelines.push_back("builtin.module(" + argument + ")");
  for (const char *variant : kOptionVariants)
    fuzzer.pipelines.push_back("builtin.module(" + std::string(variant) + ")");

  bool list = false;
  for (int i = 1; i < *argc; ++i) {
    llvm::StringRef arg((*argv)[i]);
    fuzzer.oneEntryPerInput |= arg == "--etcopy-one-entry-per-input";
    list |= arg == "--etcopy-list";
  }
  if (list) {
    for (const std::string &pipeline : fuzzer.pipelines)
      llvm::outs() << pipeline << "\n";
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzerState &fuzzer = state();
  MLIRContext context(fuzzer.registry, MLIRContext::Threading::DISABLED);
  unsigned numErrors = 0;
  ScopedDiagnosticHandler count(&context, [&](Diagnostic &diag) {
    numErrors += diag.getSeverity() == DiagnosticSeverity::Error;
    return success();
  });

  // MLIR's parser reads past the end of text that is not null-terminated
  // (a file read by a tool always is); libFuzzer's data is not.
  std::string text(reinterpret_cast<const char *>(data), size);
  if (isNestedTooDeeply(text) || hasMalformedLinalgDimensionList(text))
    return -1; // Not added to the corpus.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return 0;

  if (!fuzzer.oneEntryPerInput) {
    for (const std::string &pipeline : fuzzer.pipelines)
      runPipeline(*module, pipeline, numErrors);
    return 0;
  }
  size_t entry = llvm::xxh3_64bits(llvm::ArrayRef(data, size)) %
                 fuzzer.pipelines.size();
  runPipeline(*module, fuzzer.pipelines[entry], numErrors);
  return 0;
}
