// The process's own memory, from /proc/self/status: what a parent (the device agent's
// memory check, the service's ping) reads to know what a loaded bundle costs on the device.
#pragma once

#include <cstdint>
#include <optional>

namespace trt_edge::runner {

/// VmHWM: the peak resident set size so far, in bytes; nullopt where /proc is absent.
std::optional<int64_t> peak_rss_bytes();

/// VmRSS: the resident set size now, in bytes; nullopt where /proc is absent.
std::optional<int64_t> rss_bytes();

}  // namespace trt_edge::runner
