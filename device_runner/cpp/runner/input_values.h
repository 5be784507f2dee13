// The inputs of one request of trt-edge-run: read from --inputs DIR (one .npy per input),
// checked against their declared values (--check-values), or the symbols random inputs are
// sized by (--dims over the pinned profile's opt).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bundle.h"
#include "cli_options.h"
#include "npy.h"

namespace trt_edge::runner::cli {

/// One <input name>.npy per bundle input from `dir`; RunnerError (kRequestRefused) naming
/// the file and the input for a missing or unreadable one.
std::vector<Array> read_inputs(const std::string& dir, const Bundle& bundle);

/// --check-values: every integer input inside its declared values [low, high), or
/// RunnerError (kRequestRefused) naming the input, the element, its value and the range.
void check_values(const Bundle& bundle, const std::vector<Array>& inputs);

/// The symbols for made-up inputs: the opt of the profile `request` pins (0 otherwise),
/// then each --dims value (a symbol the bundle lacks is refused).
std::map<std::string, int64_t> symbols_for(const Options& o, const Bundle& bundle,
                                           const Request& request);

}  // namespace trt_edge::runner::cli
