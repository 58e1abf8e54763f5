#include "etcopy/Pipelines.h"
void mlir::etcopy::registerPipelines() {}
