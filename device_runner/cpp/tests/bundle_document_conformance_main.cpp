// trt_edge_bundle_document_conformance FILE: runs the bundle.json vectors
// (tests/vectors/bundle_documents.json) through the C++ bundle reader (parse_bundle,
// the parse read_bundle does), so it holds bundle.json to the schema the Python reader does.
//
// A valid case must be read; an invalid one must be refused (RunnerError, kBundleFormat)
// with a message holding "bundle.json: FIELD: ", as tests/runner/test_schemas.py checks
// the Python reader's. Prints one line per failing case, then "N passed, M failed";
// exits 0 when all pass, 1 when any fails, 2 when the file cannot be read or a case is
// malformed.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bundle.h"
#include "vector_harness.h"
#include "vector_json.h"

namespace {

using nlohmann::json;
using trt_edge::vectors::field;
using trt_edge::vectors::FormatError;
using trt_edge::vectors::text;

/// What reading `document` gives: "" when read, else the refusal's message.
std::string refusal(const json& document) {
  try {
    trt_edge::runner::parse_bundle(document.dump(), "bundle.json", "bundle");
    return "";
  } catch (const trt_edge::runner::RunnerError& e) {
    if (e.kind() != trt_edge::runner::ErrorKind::kBundleFormat) {
      return std::string("(not a bundle_format refusal) ") + e.what();
    }
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(uncaught ") + e.what() + ")";
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace vectors = trt_edge::vectors;
  const auto file =
      vectors::load(argc, argv, "bundle_documents.json", [](const vectors::VectorFile& f) {
        if (!f.doc.is_object() || !f.doc.contains("format") || f.doc.at("format") != 1) {
          throw FormatError(f.path + ": not a bundle_documents vectors file (format must be 1)");
        }
        vectors::cases(f);
      });
  if (!file) return vectors::kMalformed;
  const json& cases = vectors::cases(*file);
  vectors::Tally tally;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string at = file->path + ": cases[" + std::to_string(i) + "]";
    std::string name, want, got;
    bool valid = false;
    try {
      name = text(c, "name", at);
      const std::string where = at + " ('" + name + "')";
      const json& verdict = field(c, "valid", where);
      if (!verdict.is_boolean()) throw FormatError(where + ".valid: expected true or false");
      valid = verdict.get<bool>();
      if (!valid) want = "bundle.json: " + text(c, "field", where) + ": ";
      got = refusal(field(c, "document", where));
    } catch (const FormatError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return vectors::kMalformed;
    }
    if (valid && !got.empty()) {
      tally.fail(name + ": expected valid, got refused: " + got);
    } else if (!valid && got.find(want) == std::string::npos) {
      tally.fail(name + ": expected a refusal naming '" + want + "', got " +
                 (got.empty() ? "valid" : got));
    }
  }
  return tally.report(cases.size());
}
