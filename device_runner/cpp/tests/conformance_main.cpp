// trt_edge_conformance FILE: runs the policy's vectors against the header-only policy.
//
// FILE's "format" says which: "profile_selection" (the default when absent:
// select_profile, tests/vectors/profile_selection.json) or "mode_decision"
// (decide_mode, tests/vectors/mode_decision.json). Bundle layouts and dtypes have
// their own binaries (trt_edge_bundle_conformance, trt_edge_dtype_conformance).
// Prints one line per failing case, then "N passed, M failed"; exits 0 when all
// pass, 1 when any fails, 2 when the file cannot be read or a case is malformed.
// Same format and summary as `python -m trt_edge_runner.conformance FILE`.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trt_edge/mode_decision.h"
#include "trt_edge/profile_selection.h"
#include "vector_harness.h"
#include "vector_json.h"

namespace {

using nlohmann::json;

using trt_edge::vectors::field;
using trt_edge::vectors::FormatError;
using trt_edge::vectors::integer;

trt_edge::Dims dims(const json& v, const std::string& where) {
  if (!v.is_array()) {
    throw FormatError(where + ": expected a list of integers, got " + v.dump());
  }
  if (v.size() > static_cast<size_t>(trt_edge::kMaxRank)) {
    throw FormatError(where + ": rank " + std::to_string(v.size()) + " exceeds 8");
  }
  trt_edge::Dims out;
  for (const auto& e : v) {
    out.push_back(integer(e, where));
  }
  return out;
}

struct Case {
  std::string name;
  trt_edge::ProfileTable table;
  trt_edge::Request request;
  std::vector<trt_edge::Dims> inputs;
  trt_edge::Selection expect;
};

trt_edge::Outcome outcome(const std::string& s, const std::string& where) {
  using trt_edge::Outcome;
  for (Outcome o : {Outcome::kOk, Outcome::kPinIgnoredSingleProfile,
                    Outcome::kRequestedProfileUnavailable, Outcome::kNoProfileMatchesInputs}) {
    if (s == trt_edge::to_string(o)) {
      return o;
    }
  }
  throw FormatError(where + ": unknown outcome '" + s + "'");
}

Case parse_case(const json& raw, const std::string& at) {
  Case c;
  const json& name = field(raw, "name", at);
  if (!name.is_string()) {
    throw FormatError(at + ".name: expected a string");
  }
  c.name = name.get<std::string>();
  const std::string where = at + " ('" + c.name + "')";
  const json& table = field(raw, "table", where);
  const json& rows = field(table, "bounds", where + ".table");
  if (!rows.is_array()) {
    throw FormatError(where + ".table.bounds: expected a list of profiles");
  }
  for (size_t p = 0; p < rows.size(); ++p) {
    const std::string rp = where + ".table.bounds[" + std::to_string(p) + "]";
    if (!rows[p].is_array()) {
      throw FormatError(rp + ": expected a list of inputs");
    }
    std::vector<trt_edge::ProfileBounds> row;
    for (size_t i = 0; i < rows[p].size(); ++i) {
      const std::string ri = rp + "[" + std::to_string(i) + "]";
      row.push_back({dims(field(rows[p][i], "min", ri), ri + ".min"),
                     dims(field(rows[p][i], "max", ri), ri + ".max")});
    }
    c.table.bounds.push_back(std::move(row));
  }
  c.table.active = table.contains("active") ? integer(table.at("active"), where + ".active") : 0;
  const json& req = field(raw, "request", where);
  const json& kind = field(req, "kind", where + ".request");
  if (kind == "default") {
    c.request = trt_edge::Request::default_request();
  } else if (kind == "auto") {
    c.request = trt_edge::Request::automatic();
  } else if (kind == "pinned") {
    c.request = trt_edge::Request::pinned(
        integer(field(req, "index", where + ".request"), where + ".request.index"));
  } else {
    throw FormatError(where + ".request.kind: expected default, pinned or auto");
  }
  const json& inputs = field(raw, "inputs", where);
  if (!inputs.is_array()) {
    throw FormatError(where + ".inputs: expected a list of shapes");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    c.inputs.push_back(dims(inputs[i], where + ".inputs[" + std::to_string(i) + "]"));
  }
  const json& expect = field(raw, "expect", where);
  const json& out = field(expect, "outcome", where + ".expect");
  if (!out.is_string()) {
    throw FormatError(where + ".expect.outcome: expected a string");
  }
  c.expect.outcome = outcome(out.get<std::string>(), where + ".expect.outcome");
  const bool has_profile = expect.contains("profile");
  if (has_profile != trt_edge::continues(c.expect.outcome)) {
    throw FormatError(where + ".expect: 'profile' must be present exactly when the outcome continues");
  }
  if (has_profile) {
    c.expect.profile = integer(expect.at("profile"), where + ".expect.profile");
  }
  return c;
}

std::string describe(const trt_edge::Selection& s) {
  std::string out = trt_edge::to_string(s.outcome);
  if (s.profile) {
    out += " (profile " + std::to_string(*s.profile) + ")";
  }
  return out;
}

struct ModeCase {
  std::string name;
  std::vector<std::string> delegate_backends;
  int64_t profiles = 0;
  bool native_guard = false;
  bool honour_policy = true;
  trt_edge::ModeDecision expect;
};

bool boolean(const json& v, const std::string& where) {
  if (!v.is_boolean()) throw FormatError(where + ": expected true or false, got " + v.dump());
  return v.get<bool>();
}

ModeCase parse_mode_case(const json& raw, const std::string& at) {
  ModeCase c;
  const json& name = field(raw, "name", at);
  if (!name.is_string()) throw FormatError(at + ".name: expected a string");
  c.name = name.get<std::string>();
  const std::string where = at + " ('" + c.name + "')";
  const json& backends = field(raw, "delegate_backends", where);
  if (!backends.is_array()) throw FormatError(where + ".delegate_backends: expected a list");
  for (const auto& b : backends) {
    if (!b.is_string()) throw FormatError(where + ".delegate_backends: expected strings");
    c.delegate_backends.push_back(b.get<std::string>());
  }
  c.profiles = integer(field(raw, "profiles", where), where + ".profiles");
  c.native_guard = boolean(field(raw, "native_guard", where), where + ".native_guard");
  c.honour_policy = boolean(field(raw, "honour_policy", where), where + ".honour_policy");
  const json& expect = field(raw, "expect", where);
  const json& mode = field(expect, "mode", where + ".expect");
  if (mode == "native") {
    c.expect.mode = trt_edge::Mode::kNative;
  } else if (mode == "emulated") {
    c.expect.mode = trt_edge::Mode::kEmulated;
  } else {
    throw FormatError(where + ".expect.mode: expected native or emulated");
  }
  c.expect.profile0_only =
      boolean(field(expect, "profile0_only", where + ".expect"), where + ".expect.profile0_only");
  const json& notice = field(expect, "notice", where + ".expect");
  using trt_edge::Notice;
  if (notice.is_null()) {
    c.expect.notice = Notice::kNone;
  } else if (notice == trt_edge::to_string(Notice::kTensorRTWithoutNativeGuard)) {
    c.expect.notice = Notice::kTensorRTWithoutNativeGuard;
  } else if (notice == trt_edge::to_string(Notice::kPolicyIgnored)) {
    c.expect.notice = Notice::kPolicyIgnored;
  } else {
    throw FormatError(where + ".expect.notice: unknown notice " + notice.dump());
  }
  return c;
}

std::string describe(const trt_edge::ModeDecision& d) {
  const std::string notice = trt_edge::to_string(d.notice);
  return std::string(trt_edge::to_string(d.mode)) +
         (d.profile0_only ? ", profile 0 only" : "") +
         (notice.empty() ? "" : ", notice " + notice);
}

}  // namespace

int main(int argc, char** argv) {
  namespace vectors = trt_edge::vectors;
  std::vector<Case> cases;
  std::vector<ModeCase> mode_cases;
  const auto file = vectors::load(argc, argv, "VECTORS.json", [&](const vectors::VectorFile& f) {
    const json& doc = f.doc;
    const std::string format =
        doc.is_object() && doc.contains("format") && doc.at("format").is_string()
            ? doc.at("format").get<std::string>()
            : "profile_selection";
    if (format != "profile_selection" && format != "mode_decision") {
      throw FormatError(f.path + ": format '" + format +
                        "' is not read by this binary (profile_selection, mode_decision); "
                        "bundle_layouts: trt_edge_bundle_conformance, dtypes: "
                        "trt_edge_dtype_conformance");
    }
    const json& raw = vectors::cases(f);
    for (size_t i = 0; i < raw.size(); ++i) {
      const std::string at = f.path + ": cases[" + std::to_string(i) + "]";
      if (format == "mode_decision") {
        mode_cases.push_back(parse_mode_case(raw[i], at));
      } else {
        cases.push_back(parse_case(raw[i], at));  // Dims' length_error: exit 2 as well
      }
    }
  });
  if (!file) return vectors::kMalformed;
  vectors::Tally tally;
  for (const Case& c : cases) {
    const trt_edge::Selection got = trt_edge::select_profile(c.table, c.request, c.inputs);
    if (!(got == c.expect)) {
      tally.fail(c.name + ": expected " + describe(c.expect) + ", got " + describe(got));
    }
  }
  for (const ModeCase& c : mode_cases) {
    const trt_edge::ModeDecision got =
        trt_edge::decide_mode(c.delegate_backends, c.profiles, c.native_guard, c.honour_policy);
    if (!(got == c.expect)) {
      tally.fail(c.name + ": expected " + describe(c.expect) + ", got " + describe(got));
    }
  }
  return tally.report(cases.size() + mode_cases.size());
}
