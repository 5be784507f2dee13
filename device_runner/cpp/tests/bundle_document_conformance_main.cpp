// trt_edge_bundle_document_conformance FILE: runs the bundle.json vectors
// (tests/vectors/bundle_documents.json) through the C++ bundle reader (parse_bundle,
// the parse read_bundle does), so it holds bundle.json to the schema the Python reader does.
//
// A valid case must be read; an invalid one must be refused (RunnerError, kBundleFormat)
// with a message holding "bundle.json: FIELD: ", as tests/runner/test_schemas.py checks
// the Python reader's. Prints one line per failing case, then "N passed, M failed";
// exits 0 when all pass, 1 when any fails, 2 when the file cannot be read or a case is
// malformed.
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bundle.h"
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
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " bundle_documents.json\n";
    return 2;
  }
  const std::string path = argv[1];
  json doc;
  try {
    std::ifstream in(path);
    if (!in) throw FormatError(path + ": cannot read");
    try {
      doc = json::parse(in);
    } catch (const json::parse_error& e) {
      throw FormatError(path + ": not JSON: " + e.what());
    }
    if (!doc.is_object() || !doc.contains("format") || doc.at("format") != 1) {
      throw FormatError(path + ": not a bundle_documents vectors file (format must be 1)");
    }
    if (!field(doc, "cases", path).is_array()) throw FormatError(path + ": 'cases' must be a list");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const json& cases = doc.at("cases");
  size_t failed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string at = path + ": cases[" + std::to_string(i) + "]";
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
      return 2;
    }
    if (valid && !got.empty()) {
      ++failed;
      std::cout << "FAIL " << name << ": expected valid, got refused: " << got << "\n";
    } else if (!valid && got.find(want) == std::string::npos) {
      ++failed;
      std::cout << "FAIL " << name << ": expected a refusal naming '" << want << "', got "
                << (got.empty() ? "valid" : got) << "\n";
    }
  }
  std::cout << (cases.size() - failed) << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
