// The bundle integrity rule (see bundle_integrity.h and trt_edge_runner/bundle_integrity.py).
#include "bundle_integrity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "bundle.h"

#ifdef TRT_EDGE_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

namespace trt_edge::runner {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRegularOnly = "bundles hold regular files only";
constexpr size_t kBlock = 1 << 20;

enum class EntryKind { kFile, kDir, kLink, kOther, kUnreadable };

struct Entry {
  EntryKind kind;
  uint64_t size = 0;
  std::string what;  ///< For links, special and unreadable entries: what it is.
};

bool is_document(const std::string& path) { return path == "bundle.json" || path == "bundle.sig"; }

std::string describe_mode(mode_t mode) {
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

/// The tree below `root`, never following a link; stops past kMaxEntries + 1 entries.
void scan(const fs::path& root, const std::string& prefix, std::map<std::string, Entry>& out,
          size_t& count) {
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) {
    if (prefix.empty()) {
      throw RunnerError(ErrorKind::kBundleFormat, root.string() + ": cannot list: " + ec.message())
          .with_file(root.string());
    }
    out[prefix.substr(0, prefix.size() - 1)] = {EntryKind::kUnreadable, 0, ec.message()};
    return;
  }
  std::vector<fs::path> children;
  for (const auto& child : it) children.push_back(child.path());
  std::sort(children.begin(), children.end());
  for (const auto& child : children) {
    if (++count > kMaxEntries) return;
    const std::string rel = prefix + child.filename().string();
    struct stat info {};
    if (::lstat(child.c_str(), &info) != 0) {
      out[rel] = {EntryKind::kUnreadable, 0, std::strerror(errno)};
    } else if (S_ISLNK(info.st_mode)) {
      std::error_code lec;
      const fs::path target = fs::read_symlink(child, lec);
      out[rel] = {EntryKind::kLink, 0, "symbolic link to " + (lec ? "?" : target.string())};
    } else if (S_ISDIR(info.st_mode)) {
      out[rel] = {EntryKind::kDir, 0, ""};
      scan(child, rel + "/", out, count);
      if (count > kMaxEntries) return;
    } else if (S_ISREG(info.st_mode)) {
      out[rel] = {EntryKind::kFile, static_cast<uint64_t>(info.st_size), ""};
    } else {
      out[rel] = {EntryKind::kOther, 0, describe_mode(info.st_mode)};
    }
  }
}

/// Opens a regular file without following a link, and without hanging on a fifo.
int open_regular(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category());
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw std::system_error(EINVAL, std::generic_category(), "no longer a regular file");
  }
  return fd;
}

#ifdef TRT_EDGE_HAVE_OPENSSL
/// Hex sha256 of at most `limit` bytes of the regular file `path`.
std::string sha256_hex(const std::string& path, uint64_t limit) {
  const int fd = open_regular(path);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buffer(kBlock);
  while (limit > 0) {
    const ssize_t got = ::read(fd, buffer.data(), std::min<uint64_t>(buffer.size(), limit));
    if (got < 0) {
      const int err = errno;
      EVP_MD_CTX_free(ctx);
      ::close(fd);
      throw std::system_error(err, std::generic_category());
    }
    if (got == 0) break;
    EVP_DigestUpdate(ctx, buffer.data(), static_cast<size_t>(got));
    limit -= static_cast<uint64_t>(got);
  }
  ::close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int k = 0; k < length; ++k) {
    hex += kHex[digest[k] >> 4];
    hex += kHex[digest[k] & 0xF];
  }
  return hex;
}
#endif

/// Why a bundle.json `files` key is not a plain relative path, or "".
std::string listed_name_problem(const std::string& name) {
  if (name.find('\0') != std::string::npos) {
    return "contains a NUL character; not a path inside the bundle";
  }
  if (!name.empty() && name.front() == '/') {
    return "is an absolute path; bundle.json may list only paths inside the bundle";
  }
  size_t start = 0;
  while (true) {
    const size_t end = name.find('/', start);
    const std::string part = name.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || part == "." || part == "..") {
      return "is not a plain relative path inside the bundle (empty, '.' or '..' parts)";
    }
    if (end == std::string::npos) return "";
    start = end + 1;
  }
}

/// The folders of a relative path, innermost last ("a/b/c" -> "a", "a/b").
std::vector<std::string> parents(const std::string& path) {
  std::vector<std::string> out;
  for (size_t at = path.find('/'); at != std::string::npos; at = path.find('/', at + 1)) {
    out.push_back(path.substr(0, at));
  }
  return out;
}

std::string oversized_document(uint64_t size) {
  return std::to_string(size) + " bytes, more than the " + std::to_string(kMaxDocumentBytes) +
         "-byte cap for a bundle document";
}

void sort_problems(std::vector<Problem>& problems) {
  std::sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    if (a.path != b.path) return a.path < b.path;
    return std::strcmp(to_string(a.kind), to_string(b.kind)) < 0;
  });
}

std::string join(const std::vector<Problem>& problems) {
  std::string out;
  for (const auto& p : problems) out += "\n  " + p.path + ": " + p.detail;
  return out;
}

}  // namespace

const char* to_string(ProblemKind kind) noexcept {
  switch (kind) {
    case ProblemKind::kMissing: return "missing";
    case ProblemKind::kExtra: return "extra";
    case ProblemKind::kLinked: return "linked";
    case ProblemKind::kNotRegular: return "not_regular";
    case ProblemKind::kOversized: return "oversized";
    case ProblemKind::kSizeMismatch: return "size_mismatch";
    case ProblemKind::kSha256Mismatch: return "sha256_mismatch";
    case ProblemKind::kOutside: return "outside";
    case ProblemKind::kUnreadable: return "unreadable";
  }
  return "unknown";
}

BundleProblemsError::BundleProblemsError(const std::string& where, std::vector<Problem> problems)
    : RunnerError(ErrorKind::kBundleIntegrity, where + ": refused: " + std::to_string(problems.size()) +
                      (problems.size() == 1 ? " problem" : " problems") +
                      " with the bundle's files:" + join(problems) +
                      "\ncopy the whole bundle again, or rebuild (and re-sign) it"),
      problems_(std::move(problems)) {}

bool verifies_digests() noexcept {
#ifdef TRT_EDGE_HAVE_OPENSSL
  return true;
#else
  return false;
#endif
}

std::vector<Problem> find_problems(const std::string& dir,
                                   const std::map<std::string, FileEntry>& files, bool digests) {
  std::vector<Problem> problems;
  std::map<std::string, FileEntry> listed;
  uint64_t total = 0;
  for (const auto& [name, entry] : files) {
    const std::string why = listed_name_problem(name);
    if (!why.empty()) {
      problems.push_back({ProblemKind::kOutside, name, why});
    } else if (entry.size > 0 && static_cast<uint64_t>(entry.size) > kMaxFileBytes) {
      problems.push_back({ProblemKind::kOversized, name,
                          "bundle.json declares " + std::to_string(entry.size) +
                              " bytes, more than the " + std::to_string(kMaxFileBytes) +
                              "-byte cap for one file"});
    } else {
      listed[name] = entry;
      total += entry.size > 0 ? static_cast<uint64_t>(entry.size) : 0;
    }
  }
  if (total > kMaxBundleBytes) {
    problems.push_back({ProblemKind::kOversized, "bundle.json",
                        "lists " + std::to_string(total) + " bytes of files, more than the " +
                            std::to_string(kMaxBundleBytes) + "-byte cap"});
  }
  std::map<std::string, Entry> tree;
  size_t count = 0;
  scan(fs::path(dir), "", tree, count);
  if (count > kMaxEntries) {
    problems.push_back({ProblemKind::kOversized, ".",
                        "more than " + std::to_string(kMaxEntries) +
                            " files and folders; not a trt-edge bundle"});
    sort_problems(problems);
    return problems;
  }
  std::set<std::string> folders;
  for (const auto& [name, entry] : listed) {
    for (const auto& p : parents(name)) folders.insert(p);
  }
  for (const auto& [path, entry] : tree) {
    switch (entry.kind) {
      case EntryKind::kLink:
        problems.push_back({ProblemKind::kLinked, path, "is a " + entry.what + "; " + kRegularOnly});
        break;
      case EntryKind::kOther:
        problems.push_back(
            {ProblemKind::kNotRegular, path, "is a " + entry.what + "; " + kRegularOnly});
        break;
      case EntryKind::kUnreadable:
        problems.push_back({ProblemKind::kUnreadable, path, "cannot be read: " + entry.what});
        break;
      case EntryKind::kDir:
        if (listed.count(path)) {
          problems.push_back({ProblemKind::kNotRegular, path,
                              "is a directory, but bundle.json lists a file there"});
        } else if (!folders.count(path)) {
          problems.push_back({ProblemKind::kExtra, path,
                              "extra directory: no file bundle.json lists lives in it"});
        }
        break;
      case EntryKind::kFile: {
        if (is_document(path)) {
          if (entry.size > kMaxDocumentBytes) {
            problems.push_back({ProblemKind::kOversized, path, oversized_document(entry.size)});
          }
          break;
        }
        auto it = listed.find(path);
        if (it == listed.end()) {
          problems.push_back({ProblemKind::kExtra, path,
                              path == "model.pte"
                                  ? "not listed in bundle.json, which must list the program"
                                  : "extra file not listed in bundle.json"});
          break;
        }
        const FileEntry& want = it->second;
        if (static_cast<int64_t>(entry.size) != want.size) {
          problems.push_back({ProblemKind::kSizeMismatch, path,
                              "size " + std::to_string(entry.size) +
                                  " bytes, but bundle.json records " + std::to_string(want.size) +
                                  ": the file was truncated or modified"});
          break;
        }
#ifdef TRT_EDGE_HAVE_OPENSSL
        if (digests) {
          try {
            const std::string actual =
                sha256_hex((fs::path(dir) / path).string(), static_cast<uint64_t>(want.size) + 1);
            if (actual != want.sha256) {
              problems.push_back({ProblemKind::kSha256Mismatch, path,
                                  "sha256 " + actual.substr(0, 16) +
                                      "\u2026 does not match bundle.json (" +
                                      want.sha256.substr(0, 16) + "\u2026): the file was modified"});
            }
          } catch (const std::system_error& e) {
            problems.push_back({ProblemKind::kUnreadable, path,
                                std::string("cannot be read: ") + e.code().message()});
          }
        }
#else
        (void)digests;
#endif
        break;
      }
    }
  }
  for (const auto& [name, entry] : listed) {
    if (tree.count(name)) continue;
    std::string link;
    for (const auto& p : parents(name)) {
      auto it = tree.find(p);
      if (it != tree.end() && it->second.kind == EntryKind::kLink) {
        link = p;
        break;
      }
    }
    if (!link.empty()) {
      problems.push_back({ProblemKind::kOutside, name,
                          "is reached through the symbolic link " + link +
                              "; not a file inside the bundle"});
    } else {
      problems.push_back({ProblemKind::kMissing, name, "listed in bundle.json but missing"});
    }
  }
  if (!files.count("model.pte") && !tree.count("model.pte")) {
    problems.push_back({ProblemKind::kMissing, "model.pte",
                        "neither listed in bundle.json nor present: the bundle has no program"});
  }
  sort_problems(problems);
  return problems;
}

void refuse(const std::string& where, const std::vector<Problem>& problems) {
  if (!problems.empty()) throw BundleProblemsError(where, problems);
}

std::string read_document(const std::string& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw RunnerError(ErrorKind::kBundleFormat, dir + ": not a directory; pass a bundle directory")
        .with_file(dir);
  }
  const std::string path = (fs::path(dir) / name).string();
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    throw RunnerError(ErrorKind::kBundleFormat,
                      path + ": missing; " + dir +
                          " is not a trt-edge bundle (build one with `trt-edge build MANIFEST`)")
        .with_file(path);
  }
  if (S_ISLNK(info.st_mode)) {
    refuse(dir, {{ProblemKind::kLinked, name, std::string("is a symbolic link; ") + kRegularOnly}});
  }
  if (!S_ISREG(info.st_mode)) {
    const std::string what = S_ISDIR(info.st_mode) ? "directory" : describe_mode(info.st_mode);
    refuse(dir, {{ProblemKind::kNotRegular, name, "is a " + what + "; " + kRegularOnly}});
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxDocumentBytes) {
    refuse(dir, {{ProblemKind::kOversized, name, oversized_document(info.st_size)}});
  }
  std::string data;
  try {
    const int fd = open_regular(path);
    std::vector<char> buffer(kBlock);
    while (data.size() <= kMaxDocumentBytes) {
      const ssize_t got = ::read(fd, buffer.data(), buffer.size());
      if (got <= 0) break;
      data.append(buffer.data(), static_cast<size_t>(got));
    }
    ::close(fd);
  } catch (const std::system_error& e) {
    refuse(dir, {{ProblemKind::kUnreadable, name, std::string("cannot be read: ") + e.code().message()}});
  }
  if (data.size() > kMaxDocumentBytes) {
    refuse(dir, {{ProblemKind::kOversized, name, oversized_document(data.size())}});
  }
  return data;
}

std::vector<Problem> layout_problems(const std::string& dir) {
  try {
    const Bundle bundle = read_bundle(dir);
    return find_problems(dir, bundle.files, true);
  } catch (const BundleProblemsError& e) {
    return e.problems();
  }
}

}  // namespace trt_edge::runner
