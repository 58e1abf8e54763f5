/*===- Dialects.h - C API of the etcopy dialect -------------------*- C -*-===*\
|*                                                                            *|
|* The etcopy dialect for C programs and bindings, over MLIR's C API: the    *|
|* dialect handle, and the #etcopy.device placement attribute (create it,    *|
|* read its kind and ordinal, test whether an attribute is one).             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_C_DIALECTS_H
#define ETCOPY_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__etcopy__(): register or load the dialect (with its
   bufferization models) through MLIR's dialect-handle functions. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(EtCopy, etcopy);

/* Device kinds; the values are those of the dialect's DeviceKind and of the
   runtime's etcopy_device_kind. */
typedef enum EtCopyDeviceKind {
  EtCopyDeviceKindCPU = 0,
  EtCopyDeviceKindCUDA = 1
} EtCopyDeviceKind;

/* Whether `attr` is an #etcopy.device attribute (false for a null one). */
MLIR_CAPI_EXPORTED bool etcopyAttributeIsADevice(MlirAttribute attr);

/* #etcopy.device<kind:ordinal>, loading the dialect if needed. A null
   attribute, with an error reported to the context's diagnostic handlers,
   for an invalid device (the host with an ordinal other than 0, an ordinal
   above INT32_MAX, an unknown kind). */
MLIR_CAPI_EXPORTED MlirAttribute etcopyDeviceAttrGet(MlirContext ctx,
                                                     EtCopyDeviceKind kind,
                                                     unsigned ordinal);

/* The kind and ordinal of an #etcopy.device attribute. */
MLIR_CAPI_EXPORTED EtCopyDeviceKind etcopyDeviceAttrGetKind(MlirAttribute attr);
MLIR_CAPI_EXPORTED unsigned etcopyDeviceAttrGetOrdinal(MlirAttribute attr);

/* Whether an #etcopy.device attribute names the host. */
MLIR_CAPI_EXPORTED bool etcopyDeviceAttrIsHost(MlirAttribute attr);

/* The TypeID of #etcopy.device, for bindings. */
MLIR_CAPI_EXPORTED MlirTypeID etcopyDeviceAttrGetTypeID(void);

#ifdef __cplusplus
}
#endif

#endif /* ETCOPY_C_DIALECTS_H */
