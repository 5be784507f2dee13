// Reading the fields of a vectors file in the C++ conformance binaries: located errors
// for a field that is missing or of the wrong type (the file is malformed: exit 2).
// The frame around them (reading the file, the summary line) is vector_harness.h.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace trt_edge::vectors {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline const nlohmann::json& field(const nlohmann::json& obj, const char* key,
                                   const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) {
    throw FormatError(where + ": missing '" + key + "'");
  }
  return obj.at(key);
}

inline int64_t integer(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_integer()) {
    throw FormatError(where + ": expected an integer, got " + v.dump());
  }
  return v.get<int64_t>();
}

inline std::string text(const nlohmann::json& obj, const char* key, const std::string& where) {
  const nlohmann::json& v = field(obj, key, where);
  if (!v.is_string()) throw FormatError(where + "." + key + ": expected a string");
  return v.get<std::string>();
}

}  // namespace trt_edge::vectors
