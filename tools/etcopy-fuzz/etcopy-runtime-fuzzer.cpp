//===- etcopy-runtime-fuzzer.cpp - Fuzz the runtime's C API readers ------===//
//
// A libFuzzer target for the functions of libEtCopyRuntime's C API that read
// data the runtime does not control: device specifications
// (etcopy_parse_device), status and device kind values, registry flags, the
// method signatures compiled code exports (etcopy_signature_validate, which
// runs readSignature, and etcopy_value_is_on_device) and the arena tables it
// exports (etcopy_arenas_allocate, on a registry with the host allocator).
//
// The input is used whole by each reader: as a C string, as an array of
// etcopy_value_desc split into arguments and results by its first byte, and
// as an array of etcopy_arena_desc. Every call must return a status; a
// successful one must leave outputs that agree with the input (checked
// below). Arena sizes are kept under 1 MiB and alignments under 2 MiB, so
// that the fuzzer tests the reading, not the machine's memory; they need
// not be powers of two.
//
//===----------------------------------------------------------------------===//

#include "etcopy/Runtime/EtCopyRuntime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

/// The runtime reports a failing allocation as OUT_OF_MEMORY: let ASan's
/// allocator fail the way the C library's does (huge sizes and alignments
/// are arena descriptions the runtime must reject or survive).
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}

[[noreturn]] static void fail(const char *what) {
  std::fprintf(stderr, "etcopy-runtime-fuzzer: %s (last error: '%s')\n", what,
               etcopy_last_error_message());
  std::abort();
}

/// Copies `size` bytes into an array of `T`, dropping a trailing partial
/// element (the input is not aligned for T).
template <typename T>
static std::vector<T> readArray(const uint8_t *data, size_t size) {
  std::vector<T> array(size / sizeof(T));
  if (!array.empty())
    std::memcpy(array.data(), data, array.size() * sizeof(T));
  return array;
}

static void fuzzNames(const uint8_t *data, size_t size) {
  std::string spec(reinterpret_cast<const char *>(data), size);
  int32_t kind = -1, ordinal = -1;
  if (etcopy_parse_device(spec.c_str(), &kind, &ordinal) == ETCOPY_STATUS_OK) {
    if (!etcopy_device_kind_name(kind) || ordinal < 0)
      fail("etcopy_parse_device succeeded with an invalid device");
  } else if (std::strlen(etcopy_last_error_message()) == 0) {
    fail("etcopy_parse_device failed without a message");
  }
  (void)etcopy_parse_device(spec.c_str(), nullptr, nullptr);

  int32_t value = 0;
  std::memcpy(&value, data, size < sizeof(value) ? size : sizeof(value));
  if (!etcopy_status_name(value))
    fail("etcopy_status_name returned null");
  (void)etcopy_device_kind_name(value);

  etcopy_registry *registry = nullptr;
  if (etcopy_registry_create(static_cast<uint32_t>(value), &registry) ==
      ETCOPY_STATUS_OK)
    (void)etcopy_registry_destroy(registry);
  else if (registry)
    fail("etcopy_registry_create failed but set its output");
}

static void fuzzSignature(const uint8_t *data, size_t size) {
  if (size == 0)
    return;
  std::vector<etcopy_value_desc> values =
      readArray<etcopy_value_desc>(data + 1, size - 1);
  uint64_t numArguments = values.empty() ? 0 : data[0] % (values.size() + 1);
  etcopy_method_signature signature = {
      numArguments, values.data(), values.size() - numArguments,
      values.data() + numArguments};
  etcopy_status status = etcopy_signature_validate(&signature);
  for (const etcopy_value_desc &value : values) {
    int onDevice = etcopy_value_is_on_device(&value);
    if (status == ETCOPY_STATUS_OK &&
        onDevice != (value.kind != ETCOPY_VALUE_SCALAR &&
                     value.device_kind == ETCOPY_DEVICE_CUDA))
      fail("etcopy_value_is_on_device disagrees with a valid signature");
  }
}

static void fuzzArenas(const uint8_t *data, size_t size) {
  std::vector<etcopy_arena_desc> arenas =
      readArray<etcopy_arena_desc>(data, size);
  // Larger requests get the C library's answer (ENOMEM, reported as
  // OUT_OF_MEMORY), while ASan's allocator maps and poisons a block of the
  // whole alignment: seconds for an alignment of 2^40.
  for (etcopy_arena_desc &arena : arenas) {
    arena.size %= 1u << 20;
    arena.alignment %= 1u << 21;
  }
  etcopy_registry *registry = nullptr;
  if (etcopy_registry_create(0, &registry) != ETCOPY_STATUS_OK)
    fail("etcopy_registry_create(0) failed");
  etcopy_function_arenas table = {arenas.size(), arenas.data()};
  etcopy_arena_set *set = nullptr;
  if (etcopy_arenas_allocate(registry, &table, &set) == ETCOPY_STATUS_OK) {
    uint64_t count = 0;
    void *const *pointers = nullptr;
    if (etcopy_arena_set_count(set, &count) != ETCOPY_STATUS_OK ||
        count != arenas.size() ||
        etcopy_arena_set_pointers(set, &pointers) != ETCOPY_STATUS_OK)
      fail("an allocated arena set does not match its table");
    for (uint64_t i = 0; i < count; ++i) {
      uintptr_t address = reinterpret_cast<uintptr_t>(pointers[i]);
      if (arenas[i].size != 0 &&
          (!address || (arenas[i].alignment != 0 &&
                        address % arenas[i].alignment != 0)))
        fail("an arena is null or misaligned");
      if (arenas[i].size != 0)
        std::memset(pointers[i], 0xA5, arenas[i].size);
    }
    if (etcopy_arena_set_destroy(set) != ETCOPY_STATUS_OK)
      fail("etcopy_arena_set_destroy failed");
  } else if (set) {
    fail("etcopy_arenas_allocate failed but set its output");
  }
  (void)etcopy_registry_destroy(registry);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzzNames(data, size);
  fuzzSignature(data, size);
  fuzzArenas(data, size);
  return 0;
}
