#include "runtime_log.h"

#include <executorch/runtime/platform/platform.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace trt_edge::runner::cli {
namespace {

void emit_runtime_log(et_timestamp_t /*timestamp*/, et_pal_log_level_t level, const char* filename,
                      const char* /*function*/, size_t line, const char* message, size_t length) {
  const char* base = std::strrchr(filename, '/');
  base = base != nullptr ? base + 1 : filename;
  const bool informational = level == kInfo || level == kDebug;
  if (informational && std::strcmp(base, "cpuinfo_utils.cpp") == 0) return;
  std::cerr << static_cast<char>(level) << " executorch:" << base << ":" << line << "] "
            << std::string(message, length) << "\n";
}

bool runtime_logs_wanted() {
  const char* env = std::getenv("TRT_EDGE_RUNTIME_LOGS");
  if (env == nullptr) return false;
  const std::string v(env);
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

}  // namespace

void install_runtime_log_sink() {
  if (runtime_logs_wanted()) return;
  executorch::runtime::register_pal(executorch::runtime::PalImpl::create(emit_runtime_log, __FILE__));
}

}  // namespace trt_edge::runner::cli
