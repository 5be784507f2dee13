#include "process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace trt_edge::runner {
namespace {

/// The value of `key` ("VmHWM:") in /proc/self/status, which the kernel gives in kB.
std::optional<int64_t> status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    int64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> peak_rss_bytes() { return status_kib("VmHWM:"); }

std::optional<int64_t> rss_bytes() { return status_kib("VmRSS:"); }

}  // namespace trt_edge::runner
