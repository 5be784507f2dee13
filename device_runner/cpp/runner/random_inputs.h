// Inputs trt-edge-run makes up when none are given: random arrays at a profile's opt
// shape, the same for the same seed on every machine.
//
// Integer inputs are drawn from their declared `values` range [low, high) (clamped to
// the dtype), else from [0, 2) as the Python runner does (trt_edge_runner.tensors);
// floats are standard normal; bool is 0/1. The generator is splitmix64 (not numpy's):
// a seed gives the same arrays on x86_64 and aarch64, not the same arrays as Python.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bundle.h"
#include "npy.h"

namespace trt_edge::runner {

/// At most this many bytes of inputs are made up for one execution: a larger request
/// (a profile's opt in a damaged bundle.json, a big --dims) is refused, not allocated.
inline constexpr uint64_t kMaxGeneratedInputBytes = 4ull << 30;

/// The symbol values of profile `index`'s opt shape (profile 0 for an out-of-range index).
std::map<std::string, int64_t> opt_symbols(const Bundle& bundle, int64_t index);

/// One array per bundle input, shaped by `symbols`; RunnerError (kRequestRefused) for an
/// unsupported dtype, a missing symbol or more than kMaxGeneratedInputBytes.
std::vector<Array> random_inputs(const Bundle& bundle, const std::map<std::string, int64_t>& symbols,
                                 uint64_t seed);

}  // namespace trt_edge::runner
