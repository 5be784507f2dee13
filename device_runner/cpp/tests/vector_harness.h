// The frame every C++ conformance binary shares, so each main() holds only its own
// cases: read the vectors file named on the command line (usage, unreadable file,
// not JSON, wrong format: a located error on stderr and exit 2), print a "FAIL name:
// ..." line per disagreement, and close with "N passed, M failed" (exit 0 or 1) —
// the same lines `python -m trt_edge_runner.conformance FILE` prints.
#pragma once

#include <cstddef>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vector_json.h"

namespace trt_edge::vectors {

/// main()'s exit code when the vectors file cannot be used (unreadable, not JSON,
/// not this binary's format, a malformed case).
inline constexpr int kMalformed = 2;

/// A vectors file as read: its path (which every located error starts with) and its document.
struct VectorFile {
  std::string path;
  nlohmann::json doc;
};

/// Reads argv[1] as a vectors file and hands it to `check` (which throws FormatError
/// when the file is not the binary's format, and may parse the cases). std::nullopt once
/// the usage line or the error has been printed: main() then returns kMalformed.
inline std::optional<VectorFile> load(int argc, char** argv, const char* usage_file,
                                      const std::function<void(const VectorFile&)>& check) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " " << usage_file << "\n";
    return std::nullopt;
  }
  VectorFile file{argv[1], {}};
  try {
    std::ifstream in(file.path);
    if (!in) throw FormatError(file.path + ": cannot read");
    try {
      file.doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      throw FormatError(file.path + ": not JSON: " + e.what());
    }
    check(file);
  } catch (const std::exception& e) {  // FormatError, or a library error on a malformed file
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
  return file;
}

/// The file's "cases" list; FormatError when it is missing or not a list.
inline const nlohmann::json& cases(const VectorFile& file) {
  const nlohmann::json& raw = field(file.doc, "cases", file.path);
  if (!raw.is_array()) throw FormatError(file.path + ": 'cases' must be a list");
  return raw;
}

/// Counts and prints the disagreements, then the closing line both implementations print.
class Tally {
 public:
  /// One disagreement: prints "FAIL <what>".
  void fail(const std::string& what) {
    ++failed_;
    std::cout << "FAIL " << what << "\n";
  }

  std::size_t failed() const { return failed_; }

  /// Prints "N passed, M failed" for `checked` cases; the exit code (0: none failed, else 1).
  int report(std::size_t checked) const {
    std::cout << (checked - failed_) << " passed, " << failed_ << " failed\n";
    return failed_ == 0 ? 0 : 1;
  }

 private:
  std::size_t failed_ = 0;
};

}  // namespace trt_edge::vectors
