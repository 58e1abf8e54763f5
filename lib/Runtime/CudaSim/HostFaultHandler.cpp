//===- HostFaultHandler.cpp - Host access to device memory ------*- C++ -*-===//
//
// The SIGSEGV/SIGBUS handler that turns a host dereference of simulated
// device memory (mapped PROT_NONE), of a freed allocation or of a guard page
// into a message naming the allocation, then exits. It runs in a signal
// handler, so it only uses async-signal-safe code and reads the allocation
// table without a lock. Faults outside the simulator's address space go to the
// handler installed before it.
//
//===----------------------------------------------------------------------===//

#include "Simulator.h"

#include <cerrno>
#include <cstring>
#include <signal.h>
#include <unistd.h>

namespace etcopy::cudasim {

namespace {

struct sigaction PreviousSegvAction;
struct sigaction PreviousBusAction;
std::atomic<bool> FaultHandlersInstalled{false};

/// A fixed buffer for building the fault report with async-signal-safe code
/// only (no stdio, no allocation).
class SignalSafeText {
public:
  SignalSafeText &operator<<(const char *Text) {
    while (*Text && Length < sizeof(Data))
      Data[Length++] = *Text++;
    return *this;
  }
  SignalSafeText &decimal(uint64_t Value) {
    char Digits[24];
    size_t Count = 0;
    do {
      Digits[Count++] = char('0' + Value % 10);
      Value /= 10;
    } while (Value != 0);
    while (Count > 0 && Length < sizeof(Data))
      Data[Length++] = Digits[--Count];
    return *this;
  }
  SignalSafeText &hexadecimal(uint64_t Value) {
    char Digits[20];
    size_t Count = 0;
    do {
      Digits[Count++] = "0123456789abcdef"[Value & 0xF];
      Value >>= 4;
    } while (Value != 0);
    *this << "0x";
    while (Count > 0 && Length < sizeof(Data))
      Data[Length++] = Digits[--Count];
    return *this;
  }
  void writeToStderr() const {
    size_t Written = 0;
    while (Written < Length) {
      ssize_t Result = write(STDERR_FILENO, Data + Written, Length - Written);
      if (Result <= 0 && errno != EINTR)
        return;
      if (Result > 0)
        Written += size_t(Result);
    }
  }

private:
  char Data[768];
  size_t Length = 0;
};

/// Reports a host access to simulator-owned address space and exits. Runs
/// inside the SIGSEGV/SIGBUS handler.
[[noreturn]] void reportHostFault(uintptr_t Address) {
  SignalSafeText Text;
  Text << kPrefix << "error: ";
  Allocation *A = findAllocation(Address);
  if (!A) {
    Text << "host code dereferenced pointer ";
    Text.hexadecimal(Address)
        << ", which lies in the simulator's device address space but "
           "belongs to no allocation\n";
    Text.writeToStderr();
    _exit(1);
  }
  uint64_t Offset = Address - A->Base;
  bool Freed = A->Freed.load(std::memory_order_acquire);
  const char *Kind = memKindName(A->Kind);
  Text << "host code dereferenced " << Kind << " pointer ";
  Text.hexadecimal(Address) << " (offset ";
  Text.decimal(Offset);
  if (Freed) {
    Text << " in a freed " << Kind << " allocation of ";
    Text.decimal(A->Size) << " bytes";
  } else if (Offset < A->Size) {
    Text << " in a ";
    Text.decimal(A->Size) << "-byte allocation";
  } else {
    Text << ", past the end of a ";
    Text.decimal(A->Size) << "-byte ";
    if (A->Kind != MemKind::Device)
      Text << Kind << " ";
    Text << "allocation";
  }
  if (A->Kind != MemKind::PinnedHost) {
    Text << " on cuda:";
    Text.decimal(uint64_t(A->Device));
  }
  Text << ")\n";
  if (A->Kind == MemKind::Device && !Freed)
    Text << kPrefix
         << "note: device memory is not accessible from the host; copy it "
            "with cudaMemcpy or cudaMemcpyAsync\n";
  Text.writeToStderr();
  _exit(1);
}

void onHostFault(int Signal, siginfo_t *Info, void *Context) {
  // si_code > 0 means the kernel raised the signal for a real fault; a
  // SIGSEGV sent with kill() carries no meaningful address.
  if (Info && Info->si_code > 0 &&
      inArena(reinterpret_cast<uintptr_t>(Info->si_addr)))
    reportHostFault(reinterpret_cast<uintptr_t>(Info->si_addr));

  // Not ours: hand the signal to whoever was installed before us.
  int SavedErrno = errno;
  const struct sigaction &Previous =
      Signal == SIGBUS ? PreviousBusAction : PreviousSegvAction;
  if (Previous.sa_flags & SA_SIGINFO) {
    if (Previous.sa_sigaction) {
      Previous.sa_sigaction(Signal, Info, Context);
      errno = SavedErrno;
      return;
    }
  } else if (Previous.sa_handler != SIG_DFL && Previous.sa_handler != SIG_IGN) {
    Previous.sa_handler(Signal);
    errno = SavedErrno;
    return;
  }
  bool SentByProcess = !Info || Info->si_code <= 0;
  if (!(Previous.sa_flags & SA_SIGINFO) && Previous.sa_handler == SIG_IGN &&
      SentByProcess)
    return;
  // Default action: reinstall it and let the faulting instruction run again
  // (or re-raise a signal that was sent rather than caused by a fault).
  struct sigaction Default;
  memset(&Default, 0, sizeof(Default));
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  sigaction(Signal, &Default, nullptr);
  if (SentByProcess)
    raise(Signal);
  errno = SavedErrno;
}

} // namespace

void installFaultHandlers() {
  if (FaultHandlersInstalled.exchange(true))
    return;
  struct sigaction Action;
  memset(&Action, 0, sizeof(Action));
  Action.sa_sigaction = onHostFault;
  Action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&Action.sa_mask);
  sigaction(SIGSEGV, &Action, &PreviousSegvAction);
  sigaction(SIGBUS, &Action, &PreviousBusAction);
}

/// Puts back the handlers we replaced, if ours are still the installed ones,
/// so that nothing points into this library once it may be unloaded.
void restoreFaultHandlers() {
  if (!FaultHandlersInstalled.exchange(false))
    return;
  const int Signals[] = {SIGSEGV, SIGBUS};
  for (int Signal : Signals) {
    struct sigaction Current;
    if (sigaction(Signal, nullptr, &Current) != 0)
      continue;
    if ((Current.sa_flags & SA_SIGINFO) && Current.sa_sigaction == onHostFault)
      sigaction(Signal,
                Signal == SIGBUS ? &PreviousBusAction : &PreviousSegvAction,
                nullptr);
  }
}

} // namespace etcopy::cudasim
