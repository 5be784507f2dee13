// The bundle integrity rule, in C++: what a bundle directory may hold before
// trt-edge-run loads anything from it.
//
// The same rule as trt_edge_runner/bundle_integrity.py (read its docstring for
// the why), implemented here on its own and held to the same vectors,
// tests/vectors/bundle_layouts.json, by trt_edge_bundle_conformance. Every
// problem is reported, each naming the file:
//
//   missing, extra, linked (symbolic links; nothing is followed), not_regular
//   (a listed directory, fifos, sockets, devices), oversized (the caps below),
//   size_mismatch / sha256_mismatch (size first; sha256 needs OpenSSL),
//   outside (absolute, '.', '..' or empty parts, or reached through a linked
//   directory), unreadable.
//
// Hard links on disk are accepted (the bytes are hashed wherever the inode lives).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"

namespace trt_edge::runner {

inline constexpr uint64_t kMaxDocumentBytes = 4ull << 20;  ///< bundle.json, bundle.sig
inline constexpr uint64_t kMaxFileBytes = 8ull << 30;      ///< one listed file (declared)
inline constexpr uint64_t kMaxBundleBytes = 8ull << 30;    ///< all listed files together
inline constexpr size_t kMaxEntries = 256;                 ///< files and folders in the tree

enum class ProblemKind {
  kMissing,
  kExtra,
  kLinked,
  kNotRegular,
  kOversized,
  kSizeMismatch,
  kSha256Mismatch,
  kOutside,
  kUnreadable,
};

/// The vectors' (and Python's) spelling: "missing", "extra", "linked", ...
const char* to_string(ProblemKind kind) noexcept;

struct Problem {
  ProblemKind kind;
  std::string path;    ///< Relative to the bundle, '/'-separated; "." is the bundle itself.
  std::string detail;  ///< What is wrong and what to do, without the path.
};

/// A bundle file as bundle.json lists it.
struct FileEntry {
  std::string sha256;
  int64_t size = 0;
};

/// The bundle breaks the rule; problems() holds every finding, in path order.
class BundleProblemsError : public RunnerError {
 public:
  BundleProblemsError(const std::string& where, std::vector<Problem> problems);
  const std::vector<Problem>& problems() const noexcept { return problems_; }

 private:
  std::vector<Problem> problems_;
};

/// Every problem of the directory `dir` against the listing `files`, sorted by path
/// then kind; `digests=false` checks sizes only.
std::vector<Problem> find_problems(const std::string& dir,
                                   const std::map<std::string, FileEntry>& files, bool digests);

/// Throws one BundleProblemsError naming every problem, if there are any.
void refuse(const std::string& where, const std::vector<Problem>& problems);

/// The bytes of dir/name (bundle.json or bundle.sig): a link, a special file or one
/// above kMaxDocumentBytes is a BundleProblemsError; a missing file is a RunnerError
/// (kBundleFormat) saying the directory is not a bundle.
std::string read_document(const std::string& dir, const std::string& name);

/// Every problem of the bundle `dir`, bundle.json included: the conformance entry point.
std::vector<Problem> layout_problems(const std::string& dir);

/// True when sha256 digests are checked (built with OpenSSL), not only sizes.
bool verifies_digests() noexcept;

}  // namespace trt_edge::runner
