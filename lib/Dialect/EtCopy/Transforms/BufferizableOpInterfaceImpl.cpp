// Being written.
#include "etcopy/Dialect/EtCopy/BufferizableOpInterfaceImpl.h"
void mlir::etcopy::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &) {}
