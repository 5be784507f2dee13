#include "documents.h"

#include <executorch/runtime/backend/interface.h>

#include <iostream>

#ifndef TRT_EDGE_RUNNER_VERSION
#define TRT_EDGE_RUNNER_VERSION "unknown"
#endif
#ifndef TRT_EDGE_EXECUTORCH_VERSION
#define TRT_EDGE_EXECUTORCH_VERSION "unknown"
#endif

namespace trt_edge::runner::cli {
namespace {

Json or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

}  // namespace

Json runner_facts() {
  Json backends = Json::array();
  const size_t count = executorch::runtime::get_num_registered_backends();
  for (size_t i = 0; i < count; ++i) {
    const auto name = executorch::runtime::get_backend_name(i);
    if (name.ok()) backends.push_back(*name);
  }
  return Json{{"name", "trt-edge-run"},
              {"version", TRT_EDGE_RUNNER_VERSION},
              {"arch", compiled_arch()},
              {"executorch", TRT_EDGE_EXECUTORCH_VERSION},
              {"native_profile_guard", native_actuator_available()},
              {"verifies_digests", verifies_digests()},
              {"backends", backends}};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string request_text(const Request& r) {
  if (r.kind == RequestKind::kAuto) return "auto";
  if (r.kind == RequestKind::kPinned) return "pinned(" + std::to_string(r.index) + ")";
  return "default";
}


Json tensors_json(const std::vector<TensorSpec>& specs, const std::vector<Array>& arrays) {
  Json out = Json::array();
  for (size_t i = 0; i < arrays.size(); ++i) {
    out.push_back(Json{{"name", i < specs.size() ? specs[i].name : "output_" + std::to_string(i)},
                       {"shape", arrays[i].shape},
                       {"dtype", arrays[i].dtype}});
  }
  return out;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::string profile_name(const Bundle& b, int64_t profile) {
  return profile >= 0 && profile < static_cast<int64_t>(b.profiles.size())
             ? b.profiles[static_cast<size_t>(profile)].name
             : "";
}

/// The fields every successful document starts with (after "interface", "ok", "runner").
Json bundle_json(const ProfiledModule& module, const Options& o) {
  const Bundle& b = module.bundle();
  return Json{{"bundle", b.dir},
              {"model", Json{{"name", b.name}, {"version", b.version}}},
              {"target", Json{{"id", or_null(b.target_id)}, {"arch", or_null(b.target_arch)}}},
              {"mode", module.mode()},
              {"profile0_only", module.decision().profile0_only},
              {"digests_verified", o.verify && verifies_digests()}};
}

/// One line of JSON; bytes that are not UTF-8 (a file name) become U+FFFD, never an exception.
std::string dumped(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json document_head(bool ok) {
  return Json{{"interface", kInterfaceVersion}, {"ok", ok}, {"runner", runner_facts()}};
}

/// The JSON error document: kind, exit code, message, and where (file, input, phase).
Json error_json(const RunnerError& e) {
  Json error{{"kind", to_string(e.kind())}, {"exit_code", e.exit_code()}, {"message", e.what()}};
  if (!e.file().empty()) error["file"] = e.file();
  if (!e.input().empty()) error["input"] = e.input();
  if (!e.phase().empty()) error["phase"] = e.phase();
  if (const auto* problems = dynamic_cast<const BundleProblemsError*>(&e)) {
    Json list = Json::array();
    for (const auto& p : problems->problems()) {
      list.push_back(Json{{"kind", to_string(p.kind)}, {"path", p.path}, {"detail", p.detail}});
    }
    error["problems"] = list;
  }
  return error;
}

void print_error_json(const RunnerError& e) {
  Json doc = document_head(false);
  doc["error"] = error_json(e);
  std::cout << dumped(doc) << "\n";
}

}  // namespace trt_edge::runner::cli
