//===- EtCopy.td - etcopy dialect umbrella -----------------*- tablegen -*-===//
//
// Includes the whole dialect: the input of code and documentation generation.
//
//===----------------------------------------------------------------------===//

#ifndef ETCOPY_DIALECT_ETCOPY_ETCOPY_TD
#define ETCOPY_DIALECT_ETCOPY_ETCOPY_TD

include "etcopy/Dialect/EtCopy/EtCopyDialect.td"
include "etcopy/Dialect/EtCopy/EtCopyAttributes.td"
include "etcopy/Dialect/EtCopy/EtCopyOps.td"

#endif // ETCOPY_DIALECT_ETCOPY_ETCOPY_TD
