//===- PropagateDevice.cpp - Copies at delegate boundaries ----*- C++ -*-===//
//
// The etcopy-propagate-device pass. It classifies the functions of a module
// (methods, private host functions, delegates and the device code they
// call), checks that their placements are consistent, propagates each
// delegate's device into its types, then solves a placement for every
// tensor of host code that control flow or a function signature lets it
// choose (the fewest copies, loops weighing more), and finally materialises
// one copy per value and device it must reach, at the point the copy
// placement rule of etcopy-optimize-transfers picks.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Dialect/EtCopy/EtCopyOps.h"
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h"
#include "etcopy/Dialect/EtCopy/RemarkUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/IntEqClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace mlir::etcopy {
#define GEN_PASS_DEF_ETCOPYPROPAGATEDEVICE
#include "etcopy/Dialect/EtCopy/EtCopyPasses.h.inc"
} // namespace mlir::etcopy

using namespace mlir;
using namespace mlir::etcopy;

//===----------------------------------------------------------------------===//
// Placements
//===----------------------------------------------------------------------===//

// A placement is a DeviceAttr: `#etcopy.device<cpu>` for the host, a device
// otherwise. A null DeviceAttr means "not known" (not decided yet, or an
// encoding etcopy does not interpret).

static DeviceAttr getHost(MLIRContext *context) {
  return DeviceAttr::get(context, DeviceKind::CPU, 0);
}

/// Where a value of `type` lives; null for an uninterpreted encoding.
static DeviceAttr getPlace(Type type) {
  Placement placement = getPlacement(type);
  switch (placement.kind) {
  case Placement::Kind::Host:
    return getHost(type.getContext());
  case Placement::Kind::Device:
    return placement.device;
  case Placement::Kind::Unknown:
    break;
  }
  return nullptr;
}

/// `type` placed at `place`, unchanged when it is already there (so a host
/// type keeps its spelling, with or without `#etcopy.device<cpu>`).
static Type placeType(Type type, DeviceAttr place) {
  if (getPlace(type) == place)
    return type;
  return withPlacement(type, place);
}

/// The copies needed to make a value living at `from` available at every
/// place of `to`: one h2d per other device, and one d2h when anything other
/// than `from` is needed and `from` is a device (moves between devices go
/// through the host and share its copy).
static unsigned countCopies(DeviceAttr from, ArrayRef<DeviceAttr> to) {
  unsigned toDevices = 0;
  bool leavesDevice = false;
  for (DeviceAttr place : to) {
    if (place == from)
      continue;
    leavesDevice |= !from.isHost();
    toDevices += !place.isHost();
  }
  return toDevices + (leavesDevice ? 1 : 0);
}

/// The weight of a copy made where `value` is defined. Trip counts are
/// unknown, so each enclosing loop multiplies it by 16: a copy per
/// iteration costs more than any few copies outside the loop.
static uint64_t getWeight(Value value) {
  unsigned depth = 0;
  for (Operation *op = value.getParentBlock()->getParentOp();
       op && !isa<FunctionOpInterface>(op); op = op->getParentOp())
    depth += isa<LoopLikeOpInterface>(op);
  return uint64_t(1) << (4 * std::min(depth, 12u));
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

namespace {
/// What a function is to the pass.
enum class FunctionRole {
  /// A public host function: an entry point the runtime calls. Its signature
  /// changes only as the skip options allow.
  Method,
  /// A private host function called only directly: its signature is free.
  InternalHost,
  /// Any other host function (declared, address taken, never called): its
  /// signature is kept.
  OpaqueHost,
  /// A function carrying `etcopy.device` on a device.
  Delegate,
  /// A host-less function called from a delegate's body: device code of the
  /// delegate's device.
  DeviceHelper,
};

struct FunctionInfo {
  FunctionRole role = FunctionRole::OpaqueHost;
  /// The device of a delegate or device helper.
  DeviceAttr device;
  /// For a device helper: the first call reaching it from device code.
  func::CallOp deviceCall;
  /// Every direct call, in program order.
  SmallVector<func::CallOp> calls;
  /// The first use of the symbol other than as a callee, if any.
  Operation *otherUse = nullptr;
  /// Per-method configuration (methods only).
  bool skipH2D = false;
  bool skipD2H = false;

  bool isDeviceCode() const {
    return role == FunctionRole::Delegate || role == FunctionRole::DeviceHelper;
  }
  bool hasFreeSignature() const {
    return role == FunctionRole::InternalHost ||
           (role == FunctionRole::Method && (skipH2D || skipD2H));
  }
};

//===----------------------------------------------------------------------===//
// Placement classes
//===----------------------------------------------------------------------===//

enum class ClassKind {
  /// Placement chosen for the fewest copies.
  Free,
  /// Kept where its type says (an input edge the pass cannot rewrite).
  Fixed,
  /// A method argument under skip-h2d: the device of its users when they are
  /// all on one device, the host otherwise.
  MethodArgument,
  /// A method result under skip-d2h: the device it is produced on, if any.
  MethodResult,
};

/// Values that must share one type, hence one placement: the inputs that
/// control flow forwards one operand to (an scf.for iteration argument and
/// result, a block argument of a branch target), a function argument of a
/// free signature, or one result of such a function at every call site.
struct PlacementClass {
  ClassKind kind = ClassKind::Free;
  SmallVector<Value> members;
  /// The operands forwarded into the members.
  SmallVector<OpOperand *> sources;
  /// The members' common type before the pass.
  Type originalType;
  DeviceAttr place;
  /// For method arguments and results: the method and the position.
  func::FuncOp method;
  unsigned position = 0;

  Type getType() const { return placeType(originalType, place); }
};

/// Counters reported as pass statistics.
struct Counters {
  uint64_t h2d = 0;
  uint64_t d2h = 0;
  uint64_t naive = 0;
  uint64_t argumentsOnDevice = 0;
  uint64_t resultsOnDevice = 0;
};

/// One run of the pass over a module.
class DevicePropagation {
public:
  /// `passName` names the pass in remarks.
  DevicePropagation(ModuleOp module, bool skipH2D, bool skipD2H,
                    StringRef passName)
      : module(module), symbolTable(module), placement(module),
        defaultSkipH2D(skipH2D), defaultSkipD2H(skipD2H),
        host(getHost(module.getContext())), passName(passName),
        remarksEnabled(module.getContext()->getRemarkEngine()) {}

  LogicalResult run();
  const Counters &getCounters() const { return counters; }
  /// Whether the run changed the module.
  bool hasChangedIR() const { return changedIR; }

private:
  // Classification and checks.
  void classifyFunctions();
  LogicalResult findDeviceCode();
  LogicalResult checkDeviceSignature(func::FuncOp func);
  LogicalResult checkPlacedOps();
  std::string describe(func::FuncOp func);

  // Device code.
  void propagateIntoDeviceCode(func::FuncOp func);

  // Host code.
  void buildClasses();
  void solve();
  void setPlace(unsigned id, DeviceAttr place);
  DeviceAttr choosePlace(PlacementClass &cls);
  uint64_t getCost(PlacementClass &cls, unsigned classId, DeviceAttr place);
  void remarkKeptArgument(PlacementClass &cls);
  void remarkPlacement(PlacementClass &cls);
  LogicalResult materialize();
  LogicalResult placeUses(Value value);
  LogicalResult placeUses(Value value, ArrayRef<OpOperand *> operands);

  DeviceAttr getHome(Value value);
  DeviceAttr getRequirement(OpOperand &use);
  SmallVector<DeviceAttr> getNeeds(Value value,
                                   std::optional<unsigned> skipClass = {});
  Type getOriginalType(Value value);
  Type getExpectedType(OpOperand &use);

  /// True for a use in code unreachable from the definition of the value it
  /// uses: it never runs, so it weighs nothing in placement decisions and
  /// gets copies of its own.
  bool isUnreachableUse(OpOperand &use) {
    return placement.getUnreachableBlock(use.getOwner(),
                                         use.get().getParentRegion());
  }

  func::FuncOp getCallee(func::CallOp call) {
    return symbolTable.lookup<func::FuncOp>(call.getCallee());
  }
  bool isHostBody(func::FuncOp func) {
    return !func.isDeclaration() && !functions[func].isDeviceCode();
  }

  ModuleOp module;
  SymbolTable symbolTable;
  /// Where copies go. The pass never changes blocks, so one serves the
  /// whole run.
  CopyPlacement placement;
  bool defaultSkipH2D, defaultSkipD2H;
  DeviceAttr host;
  StringRef passName;
  /// Whether a remark engine is installed: the remarks that need more than
  /// the decision at hand to explain it are computed only then.
  bool remarksEnabled;
  Counters counters;
  bool changedIR = false;

  llvm::MapVector<func::FuncOp, FunctionInfo> functions;
  SmallVector<PlacementClass> classes;
  DenseMap<Value, unsigned> classOfValue;
  DenseMap<OpOperand *, unsigned> classOfSource;
  /// Types before the pass of the values it retyped.
  DenseMap<Value, Type> originalTypes;
  /// For getNeeds: how many reachable uses need a value at each place, and
  /// how many operands forward a value into a class.
  DenseMap<Value, llvm::SmallDenseMap<DeviceAttr, unsigned, 2>> needCounts;
  DenseMap<std::pair<Value, unsigned>, unsigned> forwardCounts;
  /// Places the host tensors of device code on each device.
  DenseMap<DeviceAttr, std::unique_ptr<AttrTypeReplacer>> replacers;
};
} // namespace

//===----------------------------------------------------------------------===//
// Classification and checks
//===----------------------------------------------------------------------===//

/// The device named by `op`'s `etcopy.device`, null when absent.
static DeviceAttr getDeviceAttr(Operation *op) {
  return op->getAttrOfType<DeviceAttr>(EtCopyDialect::getDeviceAttrName());
}

void DevicePropagation::classifyFunctions() {
  for (auto func : module.getOps<func::FuncOp>()) {
    FunctionInfo &info = functions[func];
    DeviceAttr device = getDeviceAttr(func);
    if (device && !device.isHost()) {
      info.role = FunctionRole::Delegate;
      info.device = device;
    } else if (func.isPublic()) {
      info.role = FunctionRole::Method;
    }
  }

  // The uses of every function in one walk of the module: asking for the
  // uses of each function would walk the module once per function, and
  // SymbolTable::getSymbolUses builds the attribute dictionary of every
  // operation to look into it. Here the references inside each distinct
  // attribute are found once. As there, nested symbol tables are not
  // entered, and an operation of an unknown dialect with a region may be
  // one that hides uses.
  DenseMap<Attribute, SmallVector<SymbolRefAttr, 1>> refsIn;
  auto recordUses = [&](Operation *user, Attribute attr, bool isCallee) {
    auto inserted = refsIn.try_emplace(attr);
    SmallVectorImpl<SymbolRefAttr> &refs = inserted.first->second;
    if (inserted.second)
      attr.walk<WalkOrder::PreOrder>([&](SymbolRefAttr ref) {
        refs.push_back(ref);
        return WalkResult::skip();
      });
    for (SymbolRefAttr ref : refs) {
      auto func =
          symbolTable.lookup<func::FuncOp>(ref.getRootReference());
      if (!func)
        continue;
      FunctionInfo &info = functions[func];
      if (isCallee)
        info.calls.push_back(cast<func::CallOp>(user));
      else if (!info.otherUse)
        info.otherUse = user;
    }
  };
  WalkResult result = module.getBodyRegion().walk<WalkOrder::PreOrder>(
      [&](Operation *op) -> WalkResult {
        if (op->getNumRegions() == 1 && !op->getDialect())
          return WalkResult::interrupt();
        auto call = dyn_cast<func::CallOp>(op);
        for (NamedAttribute attr : op->getRawDictionaryAttrs())
          recordUses(op, attr.getValue(), /*isCallee=*/false);
        if (std::optional<RegisteredOperationName> name =
                op->getRegisteredInfo())
          for (StringAttr attrName : name->getAttributeNames())
            if (Attribute attr =
                    op->getInherentAttr(attrName).value_or(nullptr))
              recordUses(op, attr,
                         /*isCallee=*/call &&
                             attrName == call.getCalleeAttrName());
        return op->hasTrait<OpTrait::SymbolTable>() ? WalkResult::skip()
                                                    : WalkResult::advance();
      });
  if (result.wasInterrupted()) {
    // No function is known to be only called.
    for (auto &entry : functions)
      entry.second.otherUse = module;
    return;
  }
  for (auto &[func, info] : functions) {
    if (info.role == FunctionRole::OpaqueHost && !func.isDeclaration() &&
        !info.otherUse && !info.calls.empty())
      info.role = FunctionRole::InternalHost;
  }
}

std::string DevicePropagation::describe(func::FuncOp func) {
  FunctionInfo &info = functions[func];
  std::string text;
  llvm::raw_string_ostream os(text);
  if (info.role == FunctionRole::Delegate)
    os << "delegate @" << func.getSymName() << " on " << info.device.str();
  else
    os << "@" << func.getSymName() << " (device code on " << info.device.str()
       << ")";
  return text;
}

/// Marks every function called from a delegate's body as device code of the
/// delegate's device, and rejects functions that would be both host and
/// device code.
LogicalResult DevicePropagation::findDeviceCode() {
  bool failed = false;
  SmallVector<func::FuncOp> worklist;
  for (auto &[func, info] : functions)
    if (info.role == FunctionRole::Delegate && !func.isDeclaration())
      worklist.push_back(func);

  // First in, first out: device code takes the device of the first delegate
  // (in program order) that reaches it.
  for (unsigned next = 0; next < worklist.size(); ++next) {
    func::FuncOp caller = worklist[next];
    DeviceAttr device = functions[caller].device;
    caller.walk([&](func::CallOp call) {
      func::FuncOp callee = getCallee(call);
      if (!callee)
        return;
      FunctionInfo &info = functions[callee];
      if (info.isDeviceCode()) {
        if (info.device == device)
          return;
        if (info.role == FunctionRole::DeviceHelper) {
          InFlightDiagnostic diag =
              callee.emitOpError("@")
              << callee.getSymName() << " is called from device code on both "
              << info.device.str() << " and " << device.str();
          diag.attachNote(info.deviceCall.getLoc())
              << "called from device code on " << info.device.str() << " here";
          diag.attachNote(call.getLoc())
              << "called from device code on " << device.str() << " here";
          failed = true;
          return;
        }
        InFlightDiagnostic diag =
            call.emitOpError("in device code on ")
            << device.str() << " calls " << describe(callee)
            << "; copies between devices are only placed in host code";
        diag.attachNote(callee.getLoc())
            << "@" << callee.getSymName() << " declared here";
        failed = true;
        return;
      }
      DeviceAttr explicitHost = getDeviceAttr(callee);
      if (info.role == FunctionRole::Method || explicitHost) {
        InFlightDiagnostic diag =
            callee.emitOpError("@")
            << callee.getSymName() << " is both host and device code: it is "
            << (explicitHost ? "placed on cpu" : "a method (public)")
            << " and is called from device code on " << device.str();
        diag.attachNote(call.getLoc()) << "called from device code here";
        failed = true;
        return;
      }
      info.role = FunctionRole::DeviceHelper;
      info.device = device;
      info.deviceCall = call;
      if (!callee.isDeclaration())
        worklist.push_back(callee);
    });
  }

  for (auto &[func, info] : functions) {
    if (!info.isDeviceCode())
      continue;
    if (info.otherUse) {
      info.otherUse->emitOpError()
              .append("references ", describe(func),
                      "; only direct func.call uses of a delegate can be "
                      "placed")
              .attachNote(func.getLoc())
          << "delegate declared here";
      failed = true;
      continue;
    }
    if (info.role != FunctionRole::DeviceHelper)
      continue;
    for (func::CallOp call : info.calls) {
      auto caller = call->getParentOfType<func::FuncOp>();
      if (caller && functions[caller].isDeviceCode())
        continue;
      InFlightDiagnostic diag =
          func.emitOpError("@")
          << func.getSymName() << " is both host and device code: it is "
          << "called from host code and from device code on "
          << info.device.str();
      diag.attachNote(call.getLoc()) << "called from host code here";
      diag.attachNote(info.deviceCall.getLoc())
          << "called from device code here";
      failed = true;
      break;
    }
  }
  return failure(failed);
}

/// A device function takes and returns ranked tensors placed on the host
/// (no encoding) or already on its device; scalars pass through.
LogicalResult DevicePropagation::checkDeviceSignature(func::FuncOp func) {
  DeviceAttr device = functions[func].device;
  auto check = [&](Type type, StringRef what,
                   unsigned position) -> LogicalResult {
    auto fail = [&]() {
      return func.emitOpError() << describe(func) << ": " << what << " #"
                                << position << " has type " << type;
    };
    if (isa<BaseMemRefType, UnrankedTensorType>(type))
      return fail() << ", but delegates take and return ranked tensors";
    if (!isa<RankedTensorType>(type))
      return success();
    Placement placement = getPlacement(type);
    if (placement.kind == Placement::Kind::Unknown)
      return fail() << ", whose encoding is not an #etcopy.device";
    if (placement.isDevice() && placement.device != device)
      return fail() << ", placed on " << placement.device.str();
    if (placement.isHost() && getPlacementAttr(type))
      return fail() << ", explicitly placed on cpu";
    return success();
  };
  FunctionType type = func.getFunctionType();
  for (auto [i, input] : llvm::enumerate(type.getInputs()))
    if (failed(check(input, "argument", i)))
      return failure();
  for (auto [i, result] : llvm::enumerate(type.getResults()))
    if (failed(check(result, "result", i)))
      return failure();
  return success();
}

/// Calls placed by `etcopy.device` must agree with their callee; no other
/// operation of host code may claim a device.
LogicalResult DevicePropagation::checkPlacedOps() {
  bool failed = false;
  module.walk([&](Operation *op) {
    DeviceAttr placed = getDeviceAttr(op);
    if (!placed || isa<func::FuncOp>(op))
      return;
    auto call = dyn_cast<func::CallOp>(op);
    if (!call) {
      auto parent = op->getParentOfType<func::FuncOp>();
      if (placed.isHost() || !parent || functions[parent].isDeviceCode())
        return;
      op->emitOpError("is placed on ")
          << placed.str()
          << " in host code, but only calls to delegates (functions with "
             "'etcopy.device') run on a device";
      failed = true;
      return;
    }
    func::FuncOp callee = getCallee(call);
    if (!callee)
      return;
    FunctionInfo &info = functions[callee];
    DeviceAttr expected = info.isDeviceCode() ? info.device : host;
    if (placed == expected)
      return;
    InFlightDiagnostic diag = call.emitOpError("is placed on ")
                              << placed.str() << " but calls ";
    if (info.isDeviceCode())
      diag << describe(callee);
    else
      diag << "@" << callee.getSymName() << ", a host function";
    diag.attachNote(callee.getLoc())
        << "@" << callee.getSymName() << " declared here";
    failed = true;
  });
  return failure(failed);
}

//===----------------------------------------------------------------------===//
// Device code
//===----------------------------------------------------------------------===//

/// Places every host tensor of `func` (signature, body, constants) on its
/// device, and the results of every call to it.
void DevicePropagation::propagateIntoDeviceCode(func::FuncOp func) {
  DeviceAttr device = functions[func].device;
  // One replacer per device: its cache then serves every function of the
  // device (the delegates of a model share their few signatures).
  std::unique_ptr<AttrTypeReplacer> &deviceReplacer = replacers[device];
  if (!deviceReplacer) {
    deviceReplacer = std::make_unique<AttrTypeReplacer>();
    deviceReplacer->addReplacement(
        [device](RankedTensorType type) -> std::optional<Type> {
          if (!getPlacement(type).isHost())
            return std::nullopt;
          return withPlacement(type, device);
        });
    // Tensor constants carry their type inside the attribute.
    deviceReplacer->addReplacement(
        [device](DenseElementsAttr attr) -> std::optional<Attribute> {
          auto type = dyn_cast<RankedTensorType>(attr.getType());
          if (!type || !getPlacement(type).isHost())
            return std::nullopt;
          return attr.reshape(cast<ShapedType>(withPlacement(type, device)));
        });
  }
  AttrTypeReplacer &replacer = *deviceReplacer;
  auto retype = [&](Value value) {
    if (Type type = replacer.replace(value.getType());
        type != value.getType()) {
      value.setType(type);
      changedIR = true;
    }
  };
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      retype(result);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Value arg : block.getArguments())
          retype(arg);
    // Attributes one by one, inherent ones (the function type, a constant's
    // value) by name: replacing the whole dictionary would first build one
    // holding the inherent attributes too, per operation, which costs more
    // than the rest of the pass on a module of many delegates.
    DictionaryAttr attrs = op->getRawDictionaryAttrs();
    if (Attribute replaced = replacer.replace(attrs); replaced != attrs) {
      op->setAttrs(cast<DictionaryAttr>(replaced));
      changedIR = true;
    }
    if (std::optional<RegisteredOperationName> name = op->getRegisteredInfo())
      for (StringAttr attrName : name->getAttributeNames())
        if (Attribute attr = op->getInherentAttr(attrName).value_or(nullptr))
          if (Attribute replaced = replacer.replace(attr); replaced != attr) {
            op->setInherentAttr(attrName, replaced);
            changedIR = true;
          }
  });

  for (func::CallOp call : functions[func].calls) {
    auto caller = call->getParentOfType<func::FuncOp>();
    if (caller && functions[caller].isDeviceCode())
      continue; // Retyped with its caller's body.
    for (auto [result, type] :
         llvm::zip(call.getResults(), func.getFunctionType().getResults())) {
      if (result.getType() == type)
        continue;
      originalTypes.try_emplace(result, result.getType());
      result.setType(type);
      changedIR = true;
    }
  }
}

//===----------------------------------------------------------------------===//
// Host code: placement classes
//===----------------------------------------------------------------------===//

void DevicePropagation::buildClasses() {
  // Each variable value, and each result slot of a free signature, gets an
  // id; ids that must share a type are joined.
  SmallVector<Type> idTypes;
  SmallVector<Value> idValues; // null for result slots
  DenseMap<Value, unsigned> idOfValue;
  DenseSet<Value> pinned;
  SmallVector<std::pair<OpOperand *, unsigned>> forwards;
  SmallVector<std::pair<unsigned, unsigned>> joins;
  // Method arguments and results under the skip options.
  DenseMap<unsigned, std::tuple<ClassKind, func::FuncOp, unsigned>> methodIds;

  auto newId = [&](Type type, Value value) {
    idTypes.push_back(type);
    idValues.push_back(value);
    return static_cast<unsigned>(idTypes.size() - 1);
  };
  auto getId = [&](Value value) {
    auto [it, inserted] = idOfValue.try_emplace(value, idTypes.size());
    if (inserted)
      newId(value.getType(), value);
    return it->second;
  };
  auto isPlaceable = [](Type type) {
    return isa<RankedTensorType>(type) && getPlace(type);
  };

  for (auto &[func, info] : functions) {
    if (!isHostBody(func))
      continue;

    func.walk([&](Operation *op) {
      // Control flow that forwards values: an operand may feed several
      // inputs (an scf.for init feeds the iteration argument and the
      // result); they must share its type.
      if (isa<scf::ForOp, scf::IfOp, scf::WhileOp, scf::IndexSwitchOp,
              scf::ExecuteRegionOp>(op)) {
        RegionBranchSuccessorMapping mapping;
        cast<RegionBranchOpInterface>(op).getSuccessorOperandInputMapping(
            mapping);
        SmallVector<OpOperand *> operands;
        for (OpOperand &operand : op->getOpOperands())
          operands.push_back(&operand);
        for (Region &region : op->getRegions())
          for (Block &block : region)
            if (!block.empty())
              for (OpOperand &operand : block.back().getOpOperands())
                operands.push_back(&operand);
        for (OpOperand *operand : operands) {
          auto it = mapping.find(operand);
          if (it == mapping.end() ||
              !isa<RankedTensorType>(operand->get().getType()))
            continue;
          Type type = getOriginalType(operand->get());
          bool placeable =
              isPlaceable(type) && llvm::all_of(it->second, [&](Value input) {
                return input.getType() == type;
              });
          for (Value input : it->second) {
            if (!placeable) {
              pinned.insert(input);
              continue;
            }
            joins.push_back({getId(it->second.front()), getId(input)});
          }
          if (placeable)
            forwards.push_back({operand, getId(it->second.front())});
        }
        return;
      }
      // Unstructured control flow: branch operands feed block arguments.
      if (auto branch = dyn_cast<BranchOpInterface>(op)) {
        for (OpOperand &operand : op->getOpOperands()) {
          std::optional<BlockArgument> arg =
              branch.getSuccessorBlockArgument(operand.getOperandNumber());
          if (!arg || !isa<RankedTensorType>(arg->getType()))
            continue;
          if (!isPlaceable(arg->getType()) ||
              arg->getType() != getOriginalType(operand.get())) {
            pinned.insert(*arg);
            continue;
          }
          forwards.push_back({&operand, getId(*arg)});
        }
      }
    });
    // Block arguments reached by a terminator that does not say how.
    func.walk([&](Block *block) {
      if (block->isEntryBlock())
        return;
      for (Block *pred : block->getPredecessors())
        if (!isa<BranchOpInterface>(pred->getTerminator()))
          for (BlockArgument arg : block->getArguments())
            pinned.insert(arg);
    });

    if (!info.hasFreeSignature())
      continue;

    // Arguments: call operands feed them.
    bool freeArgs = info.role == FunctionRole::InternalHost || info.skipH2D;
    for (BlockArgument arg : func.getArguments()) {
      if (!freeArgs || !isPlaceable(arg.getType()))
        continue;
      unsigned id = getId(arg);
      if (info.role == FunctionRole::Method)
        methodIds[id] = {ClassKind::MethodArgument, func, arg.getArgNumber()};
      for (func::CallOp call : info.calls)
        forwards.push_back({&call->getOpOperand(arg.getArgNumber()), id});
    }
    // Results: returns feed one slot, which every call site's result shares.
    bool freeResults = info.role == FunctionRole::InternalHost || info.skipD2H;
    if (!freeResults)
      continue;
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
    for (auto [position, type] :
         llvm::enumerate(func.getFunctionType().getResults())) {
      if (!isPlaceable(type))
        continue;
      unsigned slot = newId(type, Value());
      if (info.role == FunctionRole::Method)
        methodIds[slot] = {ClassKind::MethodResult, func, position};
      for (func::CallOp call : info.calls)
        joins.push_back({slot, getId(call.getResult(position))});
      for (func::ReturnOp ret : returns)
        forwards.push_back({&ret->getOpOperand(position), slot});
    }
  }

  // Join, then build one class per equivalence class, in id order.
  llvm::IntEqClasses equivalence(idTypes.size());
  for (auto [a, b] : joins)
    equivalence.join(a, b);
  equivalence.compress();
  classes.assign(equivalence.getNumClasses(), PlacementClass());
  for (unsigned id = 0, e = idTypes.size(); id < e; ++id) {
    unsigned classId = equivalence[id];
    PlacementClass &cls = classes[classId];
    if (!cls.originalType)
      cls.originalType = idTypes[id];
    assert(cls.originalType == idTypes[id] && "a class shares one type");
    if (Value value = idValues[id]) {
      cls.members.push_back(value);
      classOfValue[value] = classId;
      if (pinned.contains(value))
        cls.kind = ClassKind::Fixed;
    }
    auto it = methodIds.find(id);
    if (it != methodIds.end() && cls.kind != ClassKind::Fixed)
      std::tie(cls.kind, cls.method, cls.position) = it->second;
  }
  for (auto [operand, id] : forwards) {
    unsigned classId = equivalence[id];
    classes[classId].sources.push_back(operand);
    classOfSource[operand] = classId;
  }
  for (PlacementClass &cls : classes)
    if (cls.kind == ClassKind::Fixed)
      cls.place = getPlace(cls.originalType);
}

//===----------------------------------------------------------------------===//
// Host code: solving
//===----------------------------------------------------------------------===//

Type DevicePropagation::getOriginalType(Value value) {
  auto it = originalTypes.find(value);
  return it == originalTypes.end() ? value.getType() : it->second;
}

DeviceAttr DevicePropagation::getHome(Value value) {
  auto it = classOfValue.find(value);
  if (it != classOfValue.end())
    return classes[it->second].place;
  return getPlace(value.getType());
}

/// True for a use that reads only the shape of its operand (tensor.dim):
/// the data may stay wherever it is.
static bool readsShapeOnly(OpOperand &use) {
  return isa<ShapedDimOpInterface>(use.getOwner());
}

DeviceAttr DevicePropagation::getRequirement(OpOperand &use) {
  if (readsShapeOnly(use))
    return nullptr;
  auto it = classOfSource.find(&use);
  if (it != classOfSource.end())
    return classes[it->second].place;
  if (auto call = dyn_cast<func::CallOp>(use.getOwner()))
    if (func::FuncOp callee = getCallee(call))
      return getPlace(
          callee.getFunctionType().getInput(use.getOperandNumber()));
  return getPlace(getOriginalType(use.get()));
}

/// The distinct known places the users of `value` in reachable code need it
/// at, leaving out the operands forwarded into class `skipClass`. Counts the
/// uses once per value; then O(places), however many classes ask.
SmallVector<DeviceAttr>
DevicePropagation::getNeeds(Value value, std::optional<unsigned> skipClass) {
  auto [counts, inserted] = needCounts.try_emplace(value);
  if (inserted)
    for (OpOperand &use : value.getUses())
      if (!isUnreachableUse(use))
        if (DeviceAttr place = getRequirement(use))
          ++counts->second[place];
  DeviceAttr skippedPlace;
  unsigned skipped = 0;
  if (skipClass) {
    skippedPlace = classes[*skipClass].place;
    skipped = forwardCounts.lookup({value, *skipClass});
  }
  SmallVector<DeviceAttr> needs;
  for (auto [place, count] : counts->second)
    if (count > (place == skippedPlace ? skipped : 0))
      needs.push_back(place);
  return needs;
}

/// Moves class `id` to `place`, keeping the counts of getNeeds current.
void DevicePropagation::setPlace(unsigned id, DeviceAttr place) {
  PlacementClass &cls = classes[id];
  for (OpOperand *source : cls.sources) {
    if (isUnreachableUse(*source))
      continue;
    auto counts = needCounts.find(source->get());
    if (counts == needCounts.end())
      continue;
    if (cls.place)
      --counts->second[cls.place];
    if (place)
      ++counts->second[place];
  }
  cls.place = place;
}

/// The copies (weighted by loop depth) that placing `cls` at `place` costs:
/// moving each forwarded value in, and each member out to its users. Code
/// that never runs costs nothing.
uint64_t DevicePropagation::getCost(PlacementClass &cls, unsigned classId,
                                    DeviceAttr place) {
  uint64_t cost = 0;
  SetVector<Value> sourceValues;
  for (OpOperand *source : cls.sources)
    if (!isUnreachableUse(*source))
      sourceValues.insert(source->get());
  for (Value value : sourceValues) {
    auto it = classOfValue.find(value);
    if (it != classOfValue.end() && it->second == classId)
      continue; // Forwarded to its own class: no move.
    DeviceAttr home = getHome(value);
    if (!home)
      continue;
    // Only the copies this class adds count: a copy made for other users
    // of the value is shared.
    SmallVector<DeviceAttr> others = getNeeds(value, classId);
    SmallVector<DeviceAttr> withPlace(others);
    if (!llvm::is_contained(withPlace, place))
      withPlace.push_back(place);
    cost += getWeight(value) *
            (countCopies(home, withPlace) - countCopies(home, others));
  }
  for (Value member : cls.members)
    cost += getWeight(member) * countCopies(place, getNeeds(member));
  return cost;
}

DeviceAttr DevicePropagation::choosePlace(PlacementClass &cls) {
  unsigned classId = &cls - classes.data();
  switch (cls.kind) {
  case ClassKind::Fixed:
    return cls.place;
  case ClassKind::MethodArgument: {
    // On the device of its users if they are all on one device.
    SmallVector<DeviceAttr> needs = getNeeds(cls.members.front());
    if (needs.size() == 1 && !needs.front().isHost())
      return needs.front();
    return host;
  }
  case ClassKind::MethodResult: {
    // On the device it is produced on, if every return agrees.
    DeviceAttr produced;
    for (OpOperand *source : cls.sources) {
      if (isUnreachableUse(*source))
        continue;
      DeviceAttr home = getHome(source->get());
      if (!home || (produced && home != produced))
        return host;
      produced = home;
    }
    return produced ? produced : host;
  }
  case ClassKind::Free:
    break;
  }

  // Candidates: the host, then every place a source lives at or a user
  // needs, in order of appearance.
  SetVector<DeviceAttr> candidates;
  candidates.insert(host);
  for (OpOperand *source : cls.sources)
    if (!isUnreachableUse(*source))
      if (DeviceAttr home = getHome(source->get()))
        candidates.insert(home);
  // Demand: how much the members' users weigh at each place.
  DenseMap<DeviceAttr, uint64_t> demand;
  for (Value member : cls.members) {
    for (OpOperand &use : member.getUses()) {
      if (isUnreachableUse(use))
        continue;
      if (DeviceAttr place = getRequirement(use)) {
        candidates.insert(place);
        demand[place] += getWeight(member);
      }
    }
  }

  // Fewest weighted copies; on a tie, where the users are (copies then
  // happen on the way in, ahead of loops), then the current choice.
  DeviceAttr best;
  uint64_t bestCost = 0;
  for (DeviceAttr place : candidates) {
    uint64_t cost = getCost(cls, classId, place);
    bool better =
        !best || cost < bestCost ||
        (cost == bestCost &&
         (demand.lookup(place) > demand.lookup(best) ||
          (demand.lookup(place) == demand.lookup(best) && place == cls.place)));
    if (better) {
      best = place;
      bestCost = cost;
    }
  }
  return best;
}

void DevicePropagation::solve() {
  // How many reachable operands forward each value into each class, and
  // which classes each value is forwarded into.
  DenseMap<Value, SmallVector<unsigned, 2>> forwardedInto;
  for (auto [id, cls] : llvm::enumerate(classes)) {
    for (OpOperand *source : cls.sources) {
      SmallVector<unsigned, 2> &into = forwardedInto[source->get()];
      if (into.empty() || into.back() != id)
        into.push_back(id);
      if (!isUnreachableUse(*source))
        ++forwardCounts[{source->get(), static_cast<unsigned>(id)}];
    }
  }
  // The classes whose choice reads the place of class `id`: itself, those
  // forwarding one of its members (their sources' home), the class of each
  // value forwarded into it (their users' needs) and the other classes
  // that value is forwarded into (its other needs).
  auto forEachDependent = [&](unsigned id, function_ref<void(unsigned)> fn) {
    auto forwardedIntoOf = [&](Value value) {
      auto it = forwardedInto.find(value);
      if (it != forwardedInto.end())
        llvm::for_each(it->second, fn);
    };
    fn(id);
    for (Value member : classes[id].members)
      forwardedIntoOf(member);
    for (OpOperand *source : classes[id].sources) {
      if (auto it = classOfValue.find(source->get()); it != classOfValue.end())
        fn(it->second);
      forwardedIntoOf(source->get());
    }
  };

  // Choices depend on each other (a loop's result feeds another loop): a
  // few sweeps in class order settle them, each choosing again only for the
  // classes whose inputs changed (later ones in the same sweep, earlier ones
  // in the next), which is what choosing again for all would give. The
  // bound guards against two choices that keep flipping each other; the
  // last sweep's answer is valid either way.
  constexpr unsigned kMaxRounds = 8;
  std::set<unsigned> pending;
  for (unsigned id = 0, e = classes.size(); id < e; ++id)
    pending.insert(id);
  for (unsigned round = 0; round < kMaxRounds && !pending.empty(); ++round) {
    std::set<unsigned> nextRound;
    while (!pending.empty()) {
      unsigned id = *pending.begin();
      pending.erase(pending.begin());
      DeviceAttr place = choosePlace(classes[id]);
      if (place == classes[id].place)
        continue;
      setPlace(id, place);
      forEachDependent(id, [&](unsigned dependent) {
        (dependent > id ? pending : nextRound).insert(dependent);
      });
    }
    pending = std::move(nextRound);
  }
}

/// Says why a method argument stays on the host under skip-h2d: its copies
/// are kept.
void DevicePropagation::remarkKeptArgument(PlacementClass &cls) {
  Value arg = cls.members.front();
  SmallVector<DeviceAttr> needs = getNeeds(arg);
  if (!llvm::any_of(needs, [](DeviceAttr p) { return !p.isHost(); }))
    return;
  InFlightRemark remark =
      emitEtCopyRemark(remark::RemarkKind::RemarkMissed, arg.getLoc(),
                       cls.method, "ArgumentKeptOnHost", passName);
  if (!remark)
    return;
  remark << ("argument #" + Twine(cls.position) + " of method @" +
             cls.method.getSymName() +
             " stays on the host despite skip-h2d-for-method-inputs")
                .str();
  std::string reason;
  llvm::raw_string_ostream os(reason);
  if (llvm::is_contained(needs, host)) {
    // Name the first host user in program order (within one block).
    Operation *hostUser = nullptr;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      if (isUnreachableUse(use) || getRequirement(use) != host)
        continue;
      if (!hostUser || (user->getBlock() == hostUser->getBlock() &&
                        user->isBeforeInBlock(hostUser)))
        hostUser = user;
    }
    os << "it is also used on the host (by '" << hostUser->getName()
       << "')";
  } else {
    llvm::sort(needs, [](DeviceAttr a, DeviceAttr b) {
      return std::make_pair(a.getKind(), a.getOrdinal()) <
             std::make_pair(b.getKind(), b.getOrdinal());
    });
    os << "it is used on ";
    llvm::interleave(
        needs, os, [&](DeviceAttr p) { os << p.str(); }, " and on ");
  }
  remark << RemarkArg("Reason", reason);
}

/// Reports where a class of values that control flow or a free signature
/// forwards was placed.
void DevicePropagation::remarkPlacement(PlacementClass &cls) {
  if (cls.kind != ClassKind::Free || cls.members.empty())
    return;
  Value first = cls.members.front();
  Operation *scope = isa<OpResult>(first)
                         ? first.getDefiningOp()
                         : cast<BlockArgument>(first).getOwner()->getParentOp();
  InFlightRemark remark =
      emitEtCopyRemark(remark::RemarkKind::RemarkAnalysis, first.getLoc(),
                       scope, "Placement", passName);
  if (!remark)
    return;
  remark << getRemarkValueName(first) + " placed on " +
                getPlaceName(cls.getType())
         << RemarkArg("Values", cls.members.size())
         << RemarkArg("Reason",
                      cls.place == getPlace(cls.originalType)
                          ? "staying where its type says needs the fewest "
                            "copies (weighted by loop depth)"
                          : "moving there needs the fewest copies (weighted "
                            "by loop depth)");
}

//===----------------------------------------------------------------------===//
// Host code: materialisation
//===----------------------------------------------------------------------===//

Type DevicePropagation::getExpectedType(OpOperand &use) {
  if (readsShapeOnly(use))
    return use.get().getType();
  auto it = classOfSource.find(&use);
  if (it != classOfSource.end())
    return classes[it->second].getType();
  if (auto call = dyn_cast<func::CallOp>(use.getOwner()))
    if (func::FuncOp callee = getCallee(call))
      return callee.getFunctionType().getInput(use.getOperandNumber());
  return getOriginalType(use.get());
}

/// Gives every use of `value` a value of the type it expects. The uses in
/// reachable code share copies; those in each block unreachable from the
/// definition of `value` share copies of their own, in that block, so that
/// dead code never moves a live copy.
LogicalResult DevicePropagation::placeUses(Value value) {
  Type type = value.getType();
  llvm::MapVector<Block *, SmallVector<OpOperand *>> byBlock;
  for (OpOperand &use : value.getUses())
    if (getExpectedType(use) != type)
      byBlock[placement.getUnreachableBlock(use.getOwner(),
                                            value.getParentRegion())]
          .push_back(&use);
  for (auto &[block, uses] : byBlock)
    if (failed(placeUses(value, uses)))
      return failure();
  return success();
}

/// Gives `operands` using `value`, all reachable or all in one unreachable
/// block, a value of the type each expects: one copy per expected type,
/// placed by CopyPlacement; a move between devices goes through one
/// host copy shared with the host users.
LogicalResult DevicePropagation::placeUses(Value value,
                                           ArrayRef<OpOperand *> operands) {
  Type type = value.getType();
  llvm::MapVector<Type, SmallVector<OpOperand *>> groups;
  for (OpOperand *operand : operands)
    groups[getExpectedType(*operand)].push_back(operand);

  DeviceAttr home = getPlace(type);
  for (auto &[expected, uses] : groups) {
    DeviceAttr place = getPlace(expected);
    if (!home || !place || home == place) {
      Operation *user = uses.front()->getOwner();
      return user->emitOpError("operand #")
             << uses.front()->getOperandNumber() << " has type " << type
             << " but must be " << expected
             << "; etcopy only moves tensors between #etcopy.device "
                "placements";
    }
  }

  auto getOwners = [](ArrayRef<OpOperand *> uses) {
    SetVector<Operation *> owners;
    for (OpOperand *use : uses)
      owners.insert(use->getOwner());
    return owners.takeVector();
  };
  auto createCopy = [&](Value source, Type to, ArrayRef<OpOperand *> uses,
                        Operation *after) -> Value {
    Operation *point = placement.getInsertionPoint(source, getOwners(uses));
    if (after &&
        !placement.getDominanceInfo().properlyDominates(after, point))
      point = after->getNextNode();
    OpBuilder builder(point);
    Location loc = uses.front()->getOwner()->getLoc();
    Value copy;
    if (getPlace(to).isHost()) {
      copy = D2HOp::create(builder, loc, to, source).getResult();
      ++counters.d2h;
    } else {
      copy = H2DOp::create(builder, loc, to, source).getResult();
      ++counters.h2d;
    }
    if (InFlightRemark remark = remarkPassed(copy.getDefiningOp(),
                                             "CopyInserted", passName))
      remark << (copy.getDefiningOp()->getName().getStringRef() + " from " +
                 getPlaceName(source.getType()) + " to " + getPlaceName(to) +
                 " for " + Twine(uses.size()) +
                 " use(s), the first by '" +
                 uses.front()->getOwner()->getName().getStringRef() + "'")
                    .str()
             << RemarkArg("Use", ("operand #" +
                                  Twine(uses.front()->getOperandNumber()) +
                                  " of '" +
                                  uses.front()->getOwner()->getName()
                                      .getStringRef() +
                                  "'")
                                     .str())
             << RemarkArg("Value", getRemarkValueName(source));
    for (OpOperand *use : uses)
      use->set(copy);
    changedIR = true;
    return copy;
  };

  if (home.isHost()) {
    for (auto &[expected, uses] : groups)
      createCopy(value, expected, uses, /*after=*/nullptr);
    return success();
  }

  // From a device: one copy to the host, which the host users take and the
  // copies to other devices start from.
  Type hostType;
  SmallVector<OpOperand *> viaHost;
  for (auto &[expected, uses] : groups) {
    bool toHost = getPlace(expected).isHost();
    if (toHost && hostType)
      continue; // Another spelling of the host: copied on its own below.
    if (toHost)
      hostType = expected;
    viaHost.append(uses.begin(), uses.end());
  }
  if (!hostType)
    hostType = placeType(getOriginalType(value), host);
  Value hostCopy = createCopy(value, hostType, viaHost, /*after=*/nullptr);
  for (auto &[expected, uses] : groups) {
    if (expected == hostType)
      continue;
    if (getPlace(expected).isHost())
      createCopy(value, expected, uses, /*after=*/nullptr);
    else
      createCopy(hostCopy, expected, uses, hostCopy.getDefiningOp());
  }
  return success();
}

LogicalResult DevicePropagation::materialize() {
  // Retype the class members, then the free signatures.
  for (PlacementClass &cls : classes) {
    Type type = cls.getType();
    for (Value member : cls.members) {
      if (member.getType() == type)
        continue;
      originalTypes.try_emplace(member, member.getType());
      member.setType(type);
      changedIR = true;
    }
    if (cls.kind == ClassKind::MethodArgument && !cls.place.isHost()) {
      ++counters.argumentsOnDevice;
      if (InFlightRemark remark = emitEtCopyRemark(
              remark::RemarkKind::RemarkPassed, cls.members.front().getLoc(),
              cls.method, "ArgumentOnDevice", passName))
        remark << ("argument #" + Twine(cls.position) + " of method @" +
                   cls.method.getSymName() + " is taken on " +
                   cls.place.str() +
                   " (skip-h2d-for-method-inputs): no etcopy.h2d")
                      .str();
    }
    if (cls.kind == ClassKind::MethodResult && !cls.place.isHost()) {
      ++counters.resultsOnDevice;
      if (InFlightRemark remark =
              remarkPassed(cls.method, "ResultOnDevice", passName))
        remark << ("result #" + Twine(cls.position) + " of method @" +
                   cls.method.getSymName() + " is returned on " +
                   cls.place.str() +
                   " (skip-d2h-for-method-outputs): no etcopy.d2h")
                      .str();
    }
  }
  for (auto &[func, info] : functions) {
    if (!isHostBody(func) || !info.hasFreeSignature())
      continue;
    SmallVector<Type> results(func.getFunctionType().getResults());
    func.walk([&](func::ReturnOp ret) {
      for (OpOperand &operand : ret->getOpOperands()) {
        auto it = classOfSource.find(&operand);
        if (it != classOfSource.end())
          results[operand.getOperandNumber()] = classes[it->second].getType();
      }
    });
    auto type = FunctionType::get(func.getContext(),
                                  func.front().getArgumentTypes(), results);
    if (type != func.getFunctionType()) {
      func.setFunctionType(type);
      changedIR = true;
    }
  }

  // Copies, value by value. Collect first: copies add values and uses.
  SmallVector<Value> values;
  for (auto &[func, info] : functions) {
    if (!isHostBody(func))
      continue;
    func.walk([&](Block *block) {
      for (BlockArgument arg : block->getArguments())
        if (isa<RankedTensorType>(arg.getType()))
          values.push_back(arg);
    });
    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (isa<RankedTensorType>(result.getType()))
          values.push_back(result);
    });
  }
  for (Value value : values)
    if (failed(placeUses(value)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult DevicePropagation::run() {
  classifyFunctions();
  if (failed(findDeviceCode()))
    return failure();
  bool failedCheck = false;
  for (auto &[func, info] : functions)
    if (info.isDeviceCode())
      failedCheck |= failed(checkDeviceSignature(func));
  failedCheck |= failed(checkPlacedOps());
  if (failedCheck)
    return failure();

  // Per-method configuration.
  StringRef propagateAttrName = EtCopyDialect::getPropagateAttrName();
  for (auto &[func, info] : functions) {
    auto config = func->getAttrOfType<DictionaryAttr>(propagateAttrName);
    if (config && info.role != FunctionRole::Method) {
      func.emitWarning() << "'" << propagateAttrName << "' has no effect on @"
                         << func.getSymName()
                         << ": it configures methods (public host functions)";
      continue;
    }
    if (info.role != FunctionRole::Method)
      continue;
    auto getFlag = [&](StringRef key, bool defaultValue) {
      if (config)
        if (auto flag = config.getAs<BoolAttr>(key))
          return flag.getValue();
      return defaultValue;
    };
    info.skipH2D = getFlag("skip_h2d_for_method_inputs", defaultSkipH2D);
    info.skipD2H = getFlag("skip_d2h_for_method_outputs", defaultSkipD2H);
  }

  // What per-boundary insertion would copy: an h2d per delegate tensor
  // operand, a d2h per used delegate tensor result.
  for (auto &[func, info] : functions) {
    if (info.role != FunctionRole::Delegate)
      continue;
    for (func::CallOp call : info.calls) {
      auto caller = call->getParentOfType<func::FuncOp>();
      if (caller && functions[caller].isDeviceCode())
        continue;
      for (Value operand : call.getOperands())
        counters.naive += isa<RankedTensorType>(operand.getType());
      for (Value result : call.getResults())
        counters.naive +=
            isa<RankedTensorType>(result.getType()) && !result.use_empty();
    }
  }

  for (auto &[func, info] : functions)
    if (info.isDeviceCode())
      propagateIntoDeviceCode(func);

  buildClasses();
  solve();
  if (remarksEnabled) {
    for (PlacementClass &cls : classes) {
      remarkPlacement(cls);
      if (cls.kind == ClassKind::MethodArgument && cls.place.isHost())
        remarkKeptArgument(cls);
    }
  }
  return materialize();
}

namespace {
struct EtCopyPropagateDevicePass
    : public mlir::etcopy::impl::EtCopyPropagateDeviceBase<
          EtCopyPropagateDevicePass> {
  using EtCopyPropagateDeviceBase::EtCopyPropagateDeviceBase;

  void runOnOperation() override {
    DevicePropagation propagation(getOperation(), skipH2DForMethodInputs,
                                  skipD2HForMethodOutputs, getArgument());
    if (failed(propagation.run()))
      return signalPassFailure();
    // Nothing to verify again when nothing changed.
    if (!propagation.hasChangedIR())
      markAllAnalysesPreserved();
    const Counters &counters = propagation.getCounters();
    uint64_t inserted = counters.h2d + counters.d2h;
    uint64_t avoided =
        counters.naive > inserted ? counters.naive - inserted : 0;
    numH2DInserted += counters.h2d;
    numD2HInserted += counters.d2h;
    numCopiesAvoided += avoided;
    numArgumentsOnDevice += counters.argumentsOnDevice;
    numResultsOnDevice += counters.resultsOnDevice;
    remarkSummary(getOperation(), getArgument(),
                  {{"h2d-inserted", counters.h2d},
                   {"d2h-inserted", counters.d2h},
                   {"copies-avoided", avoided},
                   {"arguments-on-device", counters.argumentsOnDevice},
                   {"results-on-device", counters.resultsOnDevice}});
  }
};
} // namespace
