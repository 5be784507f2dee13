// The ExecuTorch log sink of trt-edge-run: XNNPACK's CPU-probe info lines
// (cpuinfo_utils.cpp: which /sys files it could not read, printed at every backend init on
// x86) are hidden unless TRT_EDGE_RUNTIME_LOGS=1; every other runtime log line is printed on
// stderr like the default POSIX sink does. Errors are never dropped.
#pragma once

namespace trt_edge::runner::cli {

/// Registers the filtering sink, unless TRT_EDGE_RUNTIME_LOGS asks for the runtime's own.
void install_runtime_log_sink();

}  // namespace trt_edge::runner::cli
