// trt-edge-run --help: the documentation of the runner's command line and machine
// interface (README "Running on a device" repeats it): the JSON documents --json prints,
// versioned by "interface", and the exit code of each failure kind (errors.h).
#pragma once

#include <ostream>

namespace trt_edge::runner::cli {

/// The synopsis, printed after a usage error at a terminal.
extern const char* const kUsage;

/// The synopsis, the text and the exit-code table (what --help prints).
void print_help(std::ostream& out);

}  // namespace trt_edge::runner::cli
