//===- Config.cpp - Simulator configuration from the environment *- C++ -*-===//
//
// Reads the ETCOPY_CUDA_SIM_* variables once, when the simulator is created:
// the number of devices, which pairs can enable peer access, the memory limit,
// tracing, statistics, leak checks and poisoning, the costs of the timing
// model and the chunk size of its memory pools, and the calls that fault
// injection makes fail. Malformed values are ignored with a warning naming
// the variable and what it expects.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <strings.h>

namespace etcopy::cudasim {

namespace {

/// Parses a decimal integer with no sign and no trailing text.
bool parseUnsigned(const char *Text, uint64_t &Value) {
  if (!Text || *Text < '0' || *Text > '9')
    return false;
  errno = 0;
  char *End = nullptr;
  unsigned long long Parsed = strtoull(Text, &End, 10);
  if (errno != 0 || *End != '\0')
    return false;
  Value = Parsed;
  return true;
}

/// Parses a byte count with an optional binary K, M or G suffix.
bool parseByteCount(const char *Text, uint64_t &Value) {
  if (!Text || *Text < '0' || *Text > '9')
    return false;
  errno = 0;
  char *End = nullptr;
  unsigned long long Parsed = strtoull(Text, &End, 10);
  if (errno != 0)
    return false;
  unsigned Shift = 0;
  switch (*End) {
  case '\0':
    break;
  case 'k':
  case 'K':
    Shift = 10;
    break;
  case 'm':
  case 'M':
    Shift = 20;
    break;
  case 'g':
  case 'G':
    Shift = 30;
    break;
  default:
    return false;
  }
  if (Shift != 0 && End[1] != '\0')
    return false;
  if (Shift != 0 && Parsed > (UINT64_MAX >> Shift))
    return false;
  Value = uint64_t(Parsed) << Shift;
  return true;
}

/// An unset variable gives Default; "", "0", "false", "no" and "off" are
/// false and anything else is true.
bool envFlag(const char *Name, bool Default) {
  const char *Text = getenv(Name);
  if (!Text)
    return Default;
  return !(*Text == '\0' || !strcmp(Text, "0") || !strcasecmp(Text, "false") ||
           !strcasecmp(Text, "no") || !strcasecmp(Text, "off"));
}

/// Calls Item(Text) for every comma-separated item of List, empty ones too.
template <typename Callback>
void forEachListItem(const std::string &List, Callback Item) {
  size_t Start = 0;
  while (Start <= List.size()) {
    size_t Comma = List.find(',', Start);
    if (Comma == std::string::npos)
      Comma = List.size();
    Item(List.substr(Start, Comma - Start));
    Start = Comma + 1;
  }
}

/// Parses ETCOPY_CUDA_SIM_FAIL: comma-separated KIND:N items.
void parseFaults(const char *Text, Config &Cfg) {
  Cfg.FailText = Text;
  forEachListItem(Cfg.FailText, [&](const std::string &Item) {
    if (Item.empty())
      return;
    size_t Colon = Item.rfind(':');
    FaultSpec Fault;
    Fault.Variable = "ETCOPY_CUDA_SIM_FAIL";
    bool Ok = Colon != std::string::npos &&
              parseUnsigned(Item.c_str() + Colon + 1, Fault.Ordinal) &&
              Fault.Ordinal > 0;
    std::string Kind = Ok ? Item.substr(0, Colon) : std::string();
    if (Ok && Kind == "any") {
      Fault.AnyKind = true;
    } else if (Ok) {
      const char *const *Found =
          std::find_if(std::begin(kCallKindNames), std::end(kCallKindNames),
                       [&](const char *Name) { return Kind == Name; });
      Ok = Found != std::end(kCallKindNames);
      if (Ok)
        Fault.Kind = CallKind(Found - std::begin(kCallKindNames));
    }
    if (Ok) {
      Cfg.Faults.push_back(Fault);
      return;
    }
    std::string Kinds = "any";
    for (const char *Name : kCallKindNames)
      Kinds += std::string(", ") + Name;
    emit("warning",
         "ignoring '%s' in ETCOPY_CUDA_SIM_FAIL='%s': expected KIND:N with "
         "N >= 1 and KIND one of %s",
         Item.c_str(), Text, Kinds.c_str());
  });
}

/// Reads a cost of the timing model from Variable if it is set: a decimal
/// number, at least Minimum (exclusive when Strict).
void parseCost(const std::string &Variable, const char *Unit, double Minimum,
               bool Strict, double &Value) {
  const char *Text = getenv(Variable.c_str());
  if (!Text)
    return;
  errno = 0;
  char *End = nullptr;
  double Parsed = strtod(Text, &End);
  if (End != Text && *End == '\0' && errno == 0 && std::isfinite(Parsed) &&
      (Strict ? Parsed > Minimum : Parsed >= Minimum)) {
    Value = Parsed;
    return;
  }
  emit("warning", "ignoring %s='%s': expected a number of %s %s %g; using %g",
       Variable.c_str(), Text, Unit, Strict ? "above" : "of at least", Minimum,
       Value);
}

CostModel costsFromEnvironment() {
  CostModel Costs;
  for (size_t I = 0; I < kNumLatencies; ++I) {
    Costs.LatencyNs[I] = kLatencyDefaults[I].Value;
    parseCost(std::string("ETCOPY_CUDA_SIM_COST_") + kLatencyDefaults[I].Name +
                  "_NS",
              "nanoseconds", 0, /*Strict=*/false, Costs.LatencyNs[I]);
  }
  for (size_t I = 0; I < kNumBandwidths; ++I) {
    Costs.GBps[I] = kBandwidthDefaults[I].Value;
    parseCost(std::string("ETCOPY_CUDA_SIM_BW_") + kBandwidthDefaults[I].Name +
                  "_GBPS",
              "GB/s", 0, /*Strict=*/true, Costs.GBps[I]);
  }
  return Costs;
}

/// Parses ETCOPY_CUDA_SIM_PEER_ACCESS: `all` (the default: every pair of
/// distinct devices), `none`, or comma-separated pairs A-B of devices that
/// can access each other.
void parsePeerAccess(const char *Text, Config &Cfg) {
  size_t N = size_t(Cfg.NumDevices);
  bool All = !Text || !strcmp(Text, "all");
  Cfg.PeerCapable.assign(N * N, false);
  for (size_t A = 0; All && A < N; ++A)
    for (size_t B = 0; B < N; ++B)
      Cfg.PeerCapable[A * N + B] = A != B;
  if (All || !strcmp(Text, "none"))
    return;
  forEachListItem(Text, [&](const std::string &Item) {
    if (Item.empty())
      return;
    size_t Dash = Item.find('-');
    uint64_t A = 0, B = 0;
    if (Dash != std::string::npos &&
        parseUnsigned(Item.substr(0, Dash).c_str(), A) &&
        parseUnsigned(Item.c_str() + Dash + 1, B) && A < N && B < N && A != B) {
      Cfg.PeerCapable[A * N + B] = Cfg.PeerCapable[B * N + A] = true;
      return;
    }
    emit("warning",
         "ignoring '%s' in ETCOPY_CUDA_SIM_PEER_ACCESS='%s': expected `all`, "
         "`none` or pairs A-B of distinct devices below %zu",
         Item.c_str(), Text, N);
  });
}

} // namespace

Config Config::fromEnvironment() {
  Config Cfg;
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_DEVICES")) {
    uint64_t Count = 0;
    if (parseUnsigned(Text, Count) && Count <= uint64_t(kMaxDevices))
      Cfg.NumDevices = int(Count);
    else
      emit("warning",
           "ignoring ETCOPY_CUDA_SIM_DEVICES='%s': expected an integer in "
           "[0, %d]; simulating 1 device",
           Text, kMaxDevices);
  }
  Cfg.Trace = envFlag("ETCOPY_CUDA_SIM_TRACE", false);
  Cfg.Stats = Cfg.Trace || envFlag("ETCOPY_CUDA_SIM_STATS", false);
  Cfg.LeakCheck = envFlag("ETCOPY_CUDA_SIM_LEAK_CHECK", true);
  Cfg.Poison = envFlag("ETCOPY_CUDA_SIM_POISON", true);
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_MEMORY_LIMIT")) {
    if (!parseByteCount(Text, Cfg.MemoryLimit))
      emit("warning",
           "ignoring ETCOPY_CUDA_SIM_MEMORY_LIMIT='%s': expected a byte "
           "count with an optional K, M or G suffix",
           Text);
  }
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_POOL_CHUNK")) {
    uint64_t Bytes = 0;
    if (parseByteCount(Text, Bytes) && Bytes != 0)
      Cfg.PoolChunkBytes = Bytes;
    else
      emit("warning",
           "ignoring ETCOPY_CUDA_SIM_POOL_CHUNK='%s': expected a byte count "
           "above 0 with an optional K, M or G suffix; using %" PRIu64,
           Text, Cfg.PoolChunkBytes);
  }
  parsePeerAccess(getenv("ETCOPY_CUDA_SIM_PEER_ACCESS"), Cfg);
  Cfg.Costs = costsFromEnvironment();
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_FAIL"))
    parseFaults(Text, Cfg);
  // The older spelling of ETCOPY_CUDA_SIM_FAIL=alloc:N,alloc:M,...
  if (const char *Text = getenv("ETCOPY_CUDA_SIM_FAIL_ALLOC")) {
    Cfg.FailAllocText = Text;
    forEachListItem(Cfg.FailAllocText, [&](const std::string &Item) {
      FaultSpec Fault;
      Fault.Kind = CallKind::Alloc;
      Fault.Variable = "ETCOPY_CUDA_SIM_FAIL_ALLOC";
      if (parseUnsigned(Item.c_str(), Fault.Ordinal) && Fault.Ordinal > 0)
        Cfg.Faults.push_back(Fault);
      else if (!Item.empty())
        emit("warning",
             "ignoring '%s' in ETCOPY_CUDA_SIM_FAIL_ALLOC='%s': expected "
             "a comma-separated list of allocation numbers starting at 1",
             Item.c_str(), Text);
    });
  }
  return Cfg;
}

} // namespace etcopy::cudasim
