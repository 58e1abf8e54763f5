//===- BufferEscape.h - Uses that keep a buffer local ---------*- C++ -*-===//
//
// The question that memory planning and the CUDA lowering's pinned host
// buffers both ask of every use of a buffer they would allocate themselves:
// does this use only access the buffer's memory, so that the buffer cannot
// reach code that might keep, free or return it?
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_BUFFERESCAPE_H
#define ETCOPY_DIALECT_ETCOPY_BUFFERESCAPE_H

namespace mlir {
class Operation;
class Value;
namespace etcopy {

/// Whether `user` may access the buffer `value` without the buffer escaping:
/// it reads or writes it (a declared effect on the value, e.g. a copy, load,
/// store, linalg op) and returns no memref that could alias it, or it only
/// inspects the descriptor (memref.dim). View-like ops are left to the
/// caller, which follows their results.
bool isNonEscapingAccess(Operation *user, Value value);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_DIALECT_ETCOPY_BUFFERESCAPE_H
