// trt_edge_bundle_conformance FILE: runs the bundle-layout vectors
// (tests/vectors/bundle_layouts.json) against the C++ integrity rule.
//
// Each case is materialised in a fresh temporary directory — real files, symbolic
// and hard links, fifos, sparse files — and layout_problems() must report exactly
// the expected set of (kind, path), as `python -m trt_edge_runner.conformance FILE`
// does with the Python rule. The file's caps must equal this build's. Built without
// OpenSSL (size-only), cases expecting a sha256 mismatch are skipped and counted.
// Prints one line per failing case, then "N passed, M failed"; exits 0 when all
// pass, 1 when any fails, 2 when the file cannot be read or a case is malformed.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bundle_integrity.h"
#include "vector_harness.h"
#include "vector_json.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using trt_edge::runner::layout_problems;

using trt_edge::vectors::field;
using trt_edge::vectors::FormatError;
using trt_edge::vectors::text;

void fail_errno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void make_node(const fs::path& root, const json& node, const std::string& where) {
  const fs::path path = root / text(node, "path", where);
  const std::string type = text(node, "type", where);
  fs::create_directories(path.parent_path());
  if (type == "file") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (node.contains("text")) {
      out << text(node, "text", where);
    }
    out.close();
    if (!node.contains("text")) {
      fs::resize_file(path, field(node, "size", where).get<uint64_t>());  // sparse
    }
  } else if (type == "dir") {
    fs::create_directories(path);
  } else if (type == "symlink") {
    if (::symlink(text(node, "target", where).c_str(), path.c_str()) != 0) fail_errno("symlink");
  } else if (type == "hardlink") {
    fs::create_hard_link(root / text(node, "target", where), path);
  } else if (type == "fifo") {
    if (::mkfifo(path.c_str(), 0644) != 0) fail_errno("mkfifo");
  } else {
    throw FormatError(where + ".type: unknown node type '" + type + "'");
  }
}

using ProblemSet = std::set<std::pair<std::string, std::string>>;  // (path, kind)

std::string describe(const ProblemSet& problems) {
  std::string out;
  for (const auto& [path, kind] : problems) out += (out.empty() ? "" : ", ") + kind + " '" + path + "'";
  return out.empty() ? "none" : out;
}

void check_caps(const json& caps, const std::string& path) {
  using namespace trt_edge::runner;
  const std::pair<const char*, uint64_t> ours[] = {
      {"max_document_bytes", kMaxDocumentBytes},
      {"max_file_bytes", kMaxFileBytes},
      {"max_bundle_bytes", kMaxBundleBytes},
      {"max_entries", kMaxEntries},
  };
  for (const auto& [key, value] : ours) {
    if (field(caps, key, path + ": caps").get<uint64_t>() != value) {
      throw FormatError(path + ": caps." + key + " differs from this build's " +
                        std::to_string(value));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace vectors = trt_edge::vectors;
  const auto file = vectors::load(argc, argv, "bundle_layouts.json", [](const vectors::VectorFile& f) {
    if (!f.doc.is_object() || f.doc.value("format", "") != "bundle_layouts") {
      throw FormatError(f.path + ": not a bundle_layouts vectors file (format must be "
                                 "\"bundle_layouts\")");
    }
    check_caps(field(f.doc, "caps", f.path), f.path);
    vectors::cases(f);
  });
  if (!file) return vectors::kMalformed;
  const std::string& path = file->path;
  const json& cases = vectors::cases(*file);
  vectors::Tally tally;
  size_t skipped = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string at = path + ": cases[" + std::to_string(i) + "]";
    std::string name;
    ProblemSet want, got;
    char scratch_template[] = "/tmp/trt-edge-layout-XXXXXX";
    try {
      name = text(c, "name", at);
      const std::string where = at + " ('" + name + "')";
      for (const auto& p : field(c, "expect", where)) {
        want.insert({text(p, "path", where + ".expect"), text(p, "kind", where + ".expect")});
      }
      bool expects_digest = false;
      for (const auto& w : want) expects_digest = expects_digest || w.second == "sha256_mismatch";
      if (expects_digest && !trt_edge::runner::verifies_digests()) {
        ++skipped;
        continue;
      }
      const char* made = ::mkdtemp(scratch_template);
      if (made == nullptr) fail_errno("mkdtemp");
      const fs::path scratch(made);
      const fs::path bundle = scratch / "bundle";
      fs::create_directories(bundle);
      if (c.contains("outside")) {
        for (size_t j = 0; j < c.at("outside").size(); ++j) {
          make_node(scratch, c.at("outside")[j], where + ".outside[" + std::to_string(j) + "]");
        }
      }
      const json& tree = field(c, "tree", where);
      for (size_t j = 0; j < tree.size(); ++j) {
        make_node(bundle, tree[j], where + ".tree[" + std::to_string(j) + "]");
      }
      for (const auto& p : layout_problems(bundle.string())) {
        got.insert({p.path, trt_edge::runner::to_string(p.kind)});
      }
      fs::remove_all(scratch);
    } catch (const FormatError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return vectors::kMalformed;
    } catch (const std::exception& e) {
      std::error_code ec;
      fs::remove_all(scratch_template, ec);
      got = {{"<error>", e.what()}};
    }
    if (got != want) tally.fail(name + ": expected " + describe(want) + ", got " + describe(got));
  }
  if (skipped > 0) {
    std::cout << "skipped " << skipped
              << " sha256 case(s): built without OpenSSL, this build checks sizes only\n";
  }
  return tally.report(cases.size() - skipped);
}
