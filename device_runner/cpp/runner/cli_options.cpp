#include "cli_options.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>

#include "help_text.h"

namespace trt_edge::runner::cli {

// "--bench 5", or "--dims seq=5" when the flag names a symbol (ends with '=').
static std::string shown(const std::string& flag, const std::string& text) {
  return flag + (!flag.empty() && flag.back() == '=' ? "" : " ") + text;
}

RunnerError usage(const std::string& message) { return RunnerError(ErrorKind::kUsage, message); }

int64_t parse_int(const std::string& text, const std::string& flag) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw usage(shown(flag, text) + ": expected an integer");
  }
}

// An integer flag that must lie in [low, high]: a count or size outside it is refused
// with the flag, the value and the range, rather than silently clamped or run once.
int64_t parse_int_in(const std::string& text, const std::string& flag, int64_t low, int64_t high,
                     const std::string& why) {
  const int64_t v = parse_int(text, flag);
  if (v < low || v > high) {
    throw usage(shown(flag, text) + ": must be between " + std::to_string(low) + " and " +
                std::to_string(high) + " (" + why + ")");
  }
  return v;
}

double parse_number_in(const std::string& text, const std::string& flag, double low, bool low_open,
                       double high) {
  double v = 0.0;
  try {
    size_t used = 0;
    v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw usage(shown(flag, text) + ": expected a number");
  }
  if (!std::isfinite(v) || v < low || (low_open && v == low) || v > high) {
    std::ostringstream range;
    range << (low_open ? "(" : "[") << low << ", " << high << "]";
    throw usage(shown(flag, text) + ": must be in " + range.str());
  }
  return v;
}

static std::vector<std::string> split_phases(const std::string& text) {
  if (text == "all") return {};
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) throw usage("--phases " + text + ": expected all, or phase names P,Q");
    names.push_back(name);
  }
  if (names.empty()) throw usage("--phases needs all, or phase names P,Q");
  return names;
}

/// --prompt-ids 1,2,3: comma-separated non-negative integers, at least one.
static std::vector<int64_t> parse_prompt_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) {
      throw usage("--prompt-ids " + text + ": expected comma-separated integers, e.g. 1,2,3");
    }
    int64_t id = 0;
    try {
      id = parse_int(part, "--prompt-ids");
    } catch (const RunnerError&) {
      throw usage("--prompt-ids " + text + ": '" + part +
                  "' is not an integer; expected comma-separated token ids, e.g. 1,2,3");
    }
    if (id < 0) {
      throw usage("--prompt-ids " + text + ": " + part + " is negative; token ids are >= 0");
    }
    ids.push_back(id);
  }
  if (ids.empty() || text.back() == ',') {
    throw usage("--prompt-ids " + (text.empty() ? std::string("''") : text) +
                ": expected comma-separated token ids, e.g. 1,2,3");
  }
  return ids;
}

/// --generate runs its own phases on inputs it makes: it takes no other request and none
/// of the single-request flags; it needs --prompt-ids.
/// --stop-token-ids 7,8: comma-separated token ids, at least one.
static std::vector<int64_t> parse_token_list(const std::string& text, const std::string& flag) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const int64_t id = parse_int_in(part, flag, 0, std::numeric_limits<int64_t>::max(), "a token id");
    ids.push_back(id);
  }
  if (ids.empty() || text.back() == ',') {
    throw usage(flag + " " + (text.empty() ? std::string("''") : text) +
                ": expected comma-separated token ids, e.g. 7,8");
  }
  return ids;
}

static void check_generate_flags(const Options& o, int requests, bool warmup_given) {
  if (requests > 0) {
    throw usage("--generate runs the prompt under 'prefill' and each new token under 'decode' "
                "itself: it takes no --phase, --profile, --auto, --phases or --load");
  }
  if (!o.inputs.empty() || !o.outputs.empty() || o.bench > 0 || !o.dims.empty() ||
      o.check_values || o.runs_given || warmup_given) {
    throw usage("--generate makes its own inputs from --prompt-ids: it takes no --inputs, "
                "--outputs, --dims, --check-values, --bench, --runs or --warmup");
  }
  if (!o.prompt_given) throw usage("--generate needs --prompt-ids 1,2,3 (the prompt's token ids)");
}

Options parse_command_line(int argc, char** argv) {
  Options o;
  int requests = 0;
  bool warmup_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--bundle") {
      o.bundle = next();
    } else if (a == "--phase") {
      o.phase = next();
      ++requests;
    } else if (a == "--profile") {
      o.profile = parse_int(next(), "--profile");
      ++requests;
    } else if (a == "--auto") {
      o.automatic = true;
      ++requests;
    } else if (a == "--phases") {
      o.phases = split_phases(next());
      ++requests;
    } else if (a == "--load") {
      o.load_only = true;
      ++requests;
    } else if (a == "--generate") {
      o.generate = true;
    } else if (a == "--prompt-ids") {
      o.prompt_ids = parse_prompt_ids(next());
      o.prompt_given = true;
    } else if (a == "--max-new-tokens") {
      o.max_new_tokens = parse_int_in(next(), "--max-new-tokens", 1,
                                      std::numeric_limits<int32_t>::max(), "tokens to generate");
      o.max_new_tokens_given = true;
    } else if (a == "--temperature") {
      o.sampling.temperature = parse_number_in(next(), "--temperature", 0.0, false, 100.0);
      o.sampling_given = true;
    } else if (a == "--top-k") {
      o.sampling.top_k = parse_int_in(next(), "--top-k", 0, std::numeric_limits<int32_t>::max(),
                                      "0 = off");
      o.sampling_given = true;
    } else if (a == "--top-p") {
      o.sampling.top_p = parse_number_in(next(), "--top-p", 0.0, true, 1.0);
      o.sampling_given = true;
    } else if (a == "--repetition-penalty") {
      o.sampling.repetition_penalty =
          parse_number_in(next(), "--repetition-penalty", 0.0, true, 100.0);
      o.sampling_given = true;
    } else if (a == "--sample-seed") {
      o.sampling.seed = static_cast<uint64_t>(parse_int_in(
          next(), "--sample-seed", 0, std::numeric_limits<int64_t>::max(), "a seed"));
      o.sampling_given = true;
    } else if (a == "--stop-token-ids") {
      o.stop_token_ids = parse_token_list(next(), "--stop-token-ids");
      o.sampling_given = true;
    } else if (a == "--serve") {
      o.serve = true;
    } else if (a == "--max-request-bytes") {
      o.max_request_bytes = static_cast<size_t>(parse_int_in(
          next(), "--max-request-bytes", 1024, int64_t{1} << 30, "the longest request line"));
      o.max_request_bytes_given = true;
    } else if (a == "--check-values") {
      o.check_values = true;
    } else if (a == "--dims") {
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        const std::string item = argv[++i];
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw usage("--dims " + item + ": expected SYM=INT");
        o.dims[item.substr(0, eq)] =
            parse_int_in(item.substr(eq + 1), "--dims " + item.substr(0, eq + 1), 1,
                         std::numeric_limits<int32_t>::max(), "a dimension size");
      }
    } else if (a == "--inputs") {
      o.inputs = next();
    } else if (a == "--outputs") {
      o.outputs = next();
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(parse_int_in(next(), "--seed", 0,
                                                  std::numeric_limits<int64_t>::max(), "a seed"));
    } else if (a == "--runs") {
      o.runs = static_cast<int>(
          parse_int_in(next(), "--runs", 1, 1000000, "timed runs per phase"));
      o.runs_given = true;
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(
          parse_int_in(next(), "--warmup", 0, 1000000, "untimed runs per phase"));
      warmup_given = true;
    } else if (a == "--bench") {
      o.bench = static_cast<int>(parse_int_in(next(), "--bench", 1, 1000000000,
                                              "the number of timed executions"));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--progress") {
      o.progress = true;
    } else if (a == "--no-verify") {
      o.verify = false;
    } else if (a == "--single-thread") {
      o.single_thread = true;
    } else if (a == "--ignore-policy") {
      o.honour_policy = false;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--help" || a == "-h") {
      print_help(std::cout);
      std::exit(0);
    } else {
      throw usage("unknown argument " + a);
    }
  }
  if (o.version) return o;
  if (o.bundle.empty()) throw usage("--bundle is required");
  if (o.serve) {
    if (requests > 0 || o.generate || o.prompt_given || o.max_new_tokens_given ||
        o.sampling_given || !o.inputs.empty() || !o.outputs.empty() || o.bench > 0 ||
        !o.dims.empty() || o.check_values || o.runs_given || warmup_given || o.json) {
      throw usage("--serve reads its requests as JSON lines on stdin (docs/engine-protocol.md): "
                  "it takes only --bundle, --no-verify, --ignore-policy, --progress, "
                  "--single-thread and --max-request-bytes");
    }
    return o;
  }
  if (o.max_request_bytes_given) throw usage("--max-request-bytes goes with --serve");
  if (o.generate) {
    check_generate_flags(o, requests, warmup_given);
    return o;
  }
  if (o.prompt_given || o.max_new_tokens_given || o.sampling_given) {
    throw usage("--prompt-ids and --max-new-tokens go with --generate, as do --temperature, "
                "--top-k, --top-p, --repetition-penalty, --sample-seed and --stop-token-ids");
  }
  if (requests != 1) {
    throw usage("pass exactly one of --phase, --profile, --auto, --phases, --load");
  }
  if (o.profile && *o.profile < 0) {
    throw usage("--profile " + std::to_string(*o.profile) +
                ": a profile index is never negative; use --auto for shape-based selection");
  }
  if (o.phases || o.load_only) {
    if (!o.inputs.empty() || !o.outputs.empty() || o.bench > 0 || !o.dims.empty()) {
      throw usage(o.load_only ? "--load executes nothing: it takes no --inputs, --outputs, --dims "
                                "or --bench"
                              : "--phases runs every phase at its own profile's opt shape: it "
                                "takes no --inputs, --outputs, --dims or --bench");
    }
  }
  if (!o.phases && (o.runs_given || warmup_given)) {
    throw usage("--runs and --warmup go with --phases (for one request use --bench N)");
  }
  return o;
}

}  // namespace trt_edge::runner::cli
