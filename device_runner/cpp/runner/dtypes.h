// The C++ runner's dtype table: a bundle's dtype name, its ExecuTorch ScalarType
// code, its item size and its .npy descr. The one table is Python's
// (trt_edge_runner/dtypes.py); tests/vectors/dtypes.json is written from it and
// trt_edge_dtype_conformance checks this table (and ExecuTorch's own ScalarType
// numbering and element sizes) against it, so the two cannot drift.
//
// bfloat16 has no .npy descr (numpy has no such dtype): a bfloat16 input cannot come
// from an .npy file, and a bfloat16 output is widened to float32 (exact) when it is
// written as .npy — the Python runner does the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trt_edge::runner {

struct DtypeInfo {
  const char* name;      ///< As manifests and bundle.json spell it.
  int8_t scalar_type;    ///< ExecuTorch ScalarType code.
  size_t itemsize;       ///< Bytes per element.
  const char* npy_descr; ///< NumPy .npy descr, or nullptr where numpy has none.
};

inline constexpr DtypeInfo kDtypes[] = {
    {"float32", 6, 4, "<f4"},  {"float16", 5, 2, "<f2"}, {"bfloat16", 15, 2, nullptr},
    {"float64", 7, 8, "<f8"},  {"int64", 4, 8, "<i8"},   {"int32", 3, 4, "<i4"},
    {"int16", 2, 2, "<i2"},    {"int8", 1, 1, "|i1"},    {"uint8", 0, 1, "|u1"},
    {"bool", 11, 1, "|b1"},
};

/// The row for a dtype name, or nullptr for a name no bundle may use.
inline const DtypeInfo* find_dtype(const std::string& name) noexcept {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

/// The row for an ExecuTorch ScalarType code, or nullptr for one no bundle uses.
inline const DtypeInfo* find_dtype(int8_t scalar_type) noexcept {
  for (const auto& d : kDtypes) {
    if (d.scalar_type == scalar_type) return &d;
  }
  return nullptr;
}

}  // namespace trt_edge::runner
