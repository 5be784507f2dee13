// trt-edge-run's command line: the flags, parsed and checked against each other before
// anything is read or loaded, so a usage error names the flag, its value and what is allowed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "sampler.h"

namespace trt_edge::runner::cli {

struct Options {
  std::string bundle;
  std::optional<std::string> phase;
  std::optional<int64_t> profile;
  bool automatic = false;
  std::optional<std::vector<std::string>> phases;  ///< --phases: empty vector = all
  std::map<std::string, int64_t> dims;
  std::string inputs;
  std::string outputs;
  uint64_t seed = 0;
  int runs = 3;
  int warmup = 1;
  bool runs_given = false;
  int bench = 0;
  bool json = false;
  bool progress = false;
  bool verify = true;
  bool single_thread = false;  ///< --single-thread: no ExecuTorch thread pool
  bool honour_policy = true;
  bool version = false;
  bool load_only = false;
  bool check_values = false;
  bool generate = false;
  std::vector<int64_t> prompt_ids;  ///< --prompt-ids (with --generate)
  bool prompt_given = false;
  int64_t max_new_tokens = 16;
  bool max_new_tokens_given = false;
  SamplingParams sampling;             ///< --temperature, --top-k, --top-p, ... (with --generate)
  std::vector<int64_t> stop_token_ids;  ///< --stop-token-ids
  bool sampling_given = false;
  bool serve = false;  ///< --serve: the engine protocol on stdin/stdout (docs/engine-protocol.md)
  size_t max_request_bytes = size_t{64} << 20;  ///< --max-request-bytes (with --serve)
  bool max_request_bytes_given = false;
};

/// The options of `argv`; RunnerError (kUsage) naming the flag for anything malformed.
/// --help prints the help and exits 0.
Options parse_command_line(int argc, char** argv);

/// A usage error (exit code 2) with `message`.
RunnerError usage(const std::string& message);

/// `text` as an integer, or a usage error naming `flag`.
int64_t parse_int(const std::string& text, const std::string& flag);

/// `text` as a finite number in [low, high] (low excluded when `low_open`), or a usage error
/// naming `flag` and the range.
double parse_number_in(const std::string& text, const std::string& flag, double low, bool low_open,
                       double high);

/// `text` as an integer in [low, high], or a usage error naming `flag`, the range and `why`.
int64_t parse_int_in(const std::string& text, const std::string& flag, int64_t low, int64_t high,
                     const std::string& why);

}  // namespace trt_edge::runner::cli
