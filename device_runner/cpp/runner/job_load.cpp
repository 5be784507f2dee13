#include <algorithm>
#include <iomanip>
#include <iostream>

#include "documents.h"
#include "jobs.h"
#include "process_memory.h"

namespace trt_edge::runner::cli {

/// --load: the bundle passed every check and its program loaded; what it would run as.
int report_load(const Options& o, const ProfiledModule& module) {
  const Bundle& b = module.bundle();
  Json phases = Json::object();
  for (const auto& [phase, target] : b.phases) {
    phases[phase] = target ? Json(*target) : Json("auto");
  }
  Json profiles = Json::array();
  for (const auto& profile : b.profiles) profiles.push_back(profile.name);
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc["phases"] = phases;
    doc["profiles"] = profiles;
    // Read after the load: the program, its planned memory and the backends' own state.
    const std::optional<int64_t> peak = peak_rss_bytes();
    doc["peak_rss_bytes"] = peak ? Json(*peak) : Json(nullptr);
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << b.name << " " << b.version << ": loads; " << module.mode() << " mode"
            << (module.decision().profile0_only ? " (profile 0 only)" : "") << ", "
            << b.profiles.size() << " profile(s), " << b.phases.size() << " phase(s)\n";
  return 0;
}

}  // namespace trt_edge::runner::cli
