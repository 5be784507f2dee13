// trt_edge_dtype_conformance FILE: the C++ runner's dtype table (runner/dtypes.h)
// against the one table, tests/vectors/dtypes.json (written from
// trt_edge_runner/dtypes.py), and against ExecuTorch itself: every row's
// ScalarType code must name the ExecuTorch type of that name, with ExecuTorch's
// element size. Prints one line per disagreement, then "N passed, M failed";
// exits 0 when all agree, 1 when any differs, 2 when the file cannot be read
// (the frame: vector_harness.h).
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include <cstring>
#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "dtypes.h"
#include "vector_harness.h"

namespace {

using nlohmann::json;
using trt_edge::runner::DtypeInfo;
using trt_edge::runner::find_dtype;
using trt_edge::runner::kDtypes;

// ExecuTorch's name for the type a bundle dtype denotes (executorch::runtime::toString).
const char* executorch_name(const std::string& dtype) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"float32", "Float"}, {"float16", "Half"},  {"bfloat16", "BFloat16"}, {"float64", "Double"},
      {"int64", "Long"},    {"int32", "Int"},     {"int16", "Short"},       {"int8", "Char"},
      {"uint8", "Byte"},    {"bool", "Bool"},
  };
  for (const auto& [ours, theirs] : kNames) {
    if (dtype == ours) return theirs;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  namespace vectors = trt_edge::vectors;
  const auto file = vectors::load(argc, argv, "dtypes.json", [](const vectors::VectorFile& f) {
    if (f.doc.value("format", "") != "dtypes" || !f.doc.contains("dtypes")) {
      throw vectors::FormatError(f.path + ": not a dtypes vectors file");
    }
  });
  if (!file) return vectors::kMalformed;
  size_t checked = 0;
  vectors::Tally tally;
  std::set<std::string> seen;
  for (const auto& row : file->doc.at("dtypes")) {
    ++checked;
    const std::string name = row.at("name").get<std::string>();
    seen.insert(name);
    const DtypeInfo* d = find_dtype(name);
    if (d == nullptr) {
      tally.fail(name + ": missing from runner/dtypes.h");
      continue;
    }
    if (d->scalar_type != row.at("scalar_type").get<int>()) {
      tally.fail(name + ": ScalarType code " + std::to_string(d->scalar_type) +
                 ", the table says " + row.at("scalar_type").dump());
    }
    if (d->itemsize != row.at("itemsize").get<size_t>()) {
      tally.fail(name + ": itemsize " + std::to_string(d->itemsize) + ", the table says " +
                 row.at("itemsize").dump());
    }
    if ((d->npy_descr == nullptr) != row.at("numpy").is_null()) {
      tally.fail(name + ": .npy support disagrees with the table's numpy column");
    }
    const auto st = static_cast<executorch::aten::ScalarType>(d->scalar_type);
    if (std::strcmp(executorch::runtime::toString(st), executorch_name(name)) != 0) {
      tally.fail(name + ": ExecuTorch calls ScalarType " + std::to_string(d->scalar_type) + " " +
                 executorch::runtime::toString(st) + ", expected " + executorch_name(name));
    }
    if (executorch::runtime::elementSize(st) != d->itemsize) {
      tally.fail(name + ": ExecuTorch's element size is " +
                 std::to_string(executorch::runtime::elementSize(st)));
    }
  }
  for (const auto& d : kDtypes) {
    if (!seen.count(d.name)) {
      tally.fail(std::string(d.name) + ": in runner/dtypes.h but not in the table");
    }
  }
  return tally.report(checked);
}
