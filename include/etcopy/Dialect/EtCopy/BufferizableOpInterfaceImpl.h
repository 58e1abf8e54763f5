//===- BufferizableOpInterfaceImpl.h - Bufferization of etcopy -*- C++ -*-===//
//
// Registers the BufferizableOpInterface external models of etcopy.h2d and
// etcopy.d2h, so that one-shot-bufferize turns functional copies into
// out-form copies into freshly allocated buffers in the target placement.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_BUFFERIZABLEOPINTERFACEIMPL_H
#define ETCOPY_DIALECT_ETCOPY_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace etcopy {

void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace etcopy
} // namespace mlir

#endif // ETCOPY_DIALECT_ETCOPY_BUFFERIZABLEOPINTERFACEIMPL_H
