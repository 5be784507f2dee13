// trt-edge-run's command line: a subcommand per job and its own flags, parsed and checked
// before anything is read or loaded, so a usage error names the subcommand, the flag, its
// value and what is allowed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "sampler.h"

namespace trt_edge::runner::cli {

/// The subcommands, one per job (jobs.h).
enum class Command { kRun, kPhases, kLoad, kGenerate, kServe, kVersion };

struct Options {
  Command command = Command::kRun;
  std::string bundle;
  // run: exactly one request.
  std::optional<std::string> phase;
  std::optional<int64_t> profile;
  bool automatic = false;
  std::map<std::string, int64_t> dims;
  std::string inputs;
  std::string outputs;
  bool check_values = false;
  int bench = 0;
  // run and phases.
  uint64_t seed = 0;
  // phases.
  std::vector<std::string> phases;  ///< phases --only P,Q: empty = all
  int runs = 3;
  int warmup = 1;
  // every job that loads the bundle.
  bool json = false;
  bool progress = false;
  bool verify = true;
  bool single_thread = false;  ///< --single-thread: no ExecuTorch thread pool
  bool honour_policy = true;
  // generate.
  std::vector<int64_t> prompt_ids;  ///< --prompt-ids
  int64_t max_new_tokens = 16;
  SamplingParams sampling;              ///< --temperature, --top-k, --top-p, ...
  std::vector<int64_t> stop_token_ids;  ///< --stop-token-ids
  // serve: the engine protocol on stdin/stdout (docs/engine-protocol.md).
  size_t max_request_bytes = size_t{64} << 20;  ///< --max-request-bytes
};

/// The options of `argv`: `trt-edge-run SUBCOMMAND FLAGS...` (cli_table.cpp), or the older
/// flag-only form (`--phase P`, `--generate`, ...; cli_legacy.cpp) read as its subcommand.
/// RunnerError (kUsage) naming the subcommand and the flag for anything malformed.
/// --help (anywhere) prints the help of the subcommand, or of the runner, and exits 0.
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

/// `all` (an empty list) or phase names P,Q, or a usage error naming `flag`.
std::vector<std::string> parse_phase_names(const std::string& text, const std::string& flag);

/// --prompt-ids 1,2,3: comma-separated non-negative integers, at least one.
std::vector<int64_t> parse_prompt_ids(const std::string& text);

/// Comma-separated token ids (--stop-token-ids 7,8), at least one.
std::vector<int64_t> parse_token_list(const std::string& text, const std::string& flag);

}  // namespace trt_edge::runner::cli
