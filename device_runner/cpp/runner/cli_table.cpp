#include "cli_table.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace trt_edge::runner::cli {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The flags of every job that loads a bundle, then `own`; serve has no --json (it always
// speaks JSON).
std::vector<const char*> loading(std::initializer_list<const char*> own) {
  std::vector<const char*> flags = {"--bundle", "--progress", "--no-verify", "--ignore-policy",
                                    "--single-thread"};
  flags.insert(flags.end(), own.begin(), own.end());
  return flags;
}

void set_dim(Options& o, const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos) throw usage("--dims " + item + ": expected SYM=INT");
  o.dims[item.substr(0, eq)] = parse_int_in(item.substr(eq + 1), "--dims " + item.substr(0, eq + 1),
                                            1, kInt32Max, "a dimension size");
}

void set_profile(Options& o, const std::string& v) {
  o.profile = parse_int(v, "--profile");
  if (*o.profile < 0) {
    throw usage("--profile " + v +
                ": a profile index is never negative; use --auto for shape-based selection");
  }
}

const std::vector<Flag> kFlags = {
    // Every job that loads the bundle.
    {"--bundle", "DIR", Arity::kOne, "the bundle directory (bundle.json, model.pte)",
     [](Options& o, const std::string& v) { o.bundle = v; }},
    {"--json", "", Arity::kNone, "one JSON document on stdout, also when the run fails",
     [](Options& o, const std::string&) { o.json = true; }},
    {"--progress", "", Arity::kNone, "`trt-edge-run: progress: STAGE` on stderr as each stage starts",
     [](Options& o, const std::string&) { o.progress = true; }},
    {"--no-verify", "", Arity::kNone, "skip checking the bundle's files against bundle.json",
     [](Options& o, const std::string&) { o.verify = false; }},
    {"--ignore-policy", "", Arity::kNone,
     "run every request as profile 0, as a runner without the policy would",
     [](Options& o, const std::string&) { o.honour_policy = false; }},
    {"--single-thread", "", Arity::kNone, "the CPU kernels on the calling thread only (no pool)",
     [](Options& o, const std::string&) { o.single_thread = true; }},
    // run: the request.
    {"--phase", "P", Arity::kOne, "a phase of the bundle's runtime policy (e.g. decode)",
     [](Options& o, const std::string& v) { o.phase = v; }},
    {"--profile", "N", Arity::kOne, "pin profile N", set_profile},
    {"--auto", "", Arity::kNone, "select from the input shapes (sticky first-fit)",
     [](Options& o, const std::string&) { o.automatic = true; }},
    {"--dims", "SYM=INT ...", Arity::kMany, "sizes of the random inputs (else the profile's opt)",
     set_dim},
    {"--seed", "S", Arity::kOne, "seed of the random inputs (default 0)",
     [](Options& o, const std::string& v) {
       o.seed = static_cast<uint64_t>(parse_int_in(v, "--seed", 0, kInt64Max, "a seed"));
     }},
    {"--inputs", "DIR", Arity::kOne, "one <input name>.npy per input (np.save)",
     [](Options& o, const std::string& v) { o.inputs = v; }},
    {"--check-values", "", Arity::kNone, "refuse --inputs integers outside their declared values",
     [](Options& o, const std::string&) { o.check_values = true; }},
    {"--outputs", "DIR", Arity::kOne, "write <output name>.npy per output",
     [](Options& o, const std::string& v) { o.outputs = v; }},
    {"--bench", "N", Arity::kOne, "time N executions after a warm-up, next to a raw execute",
     [](Options& o, const std::string& v) {
       o.bench = static_cast<int>(
           parse_int_in(v, "--bench", 1, 1000000000, "the number of timed executions"));
     }},
    // phases.
    {"--only", "all|P,Q", Arity::kOne, "the phases to run (default all)",
     [](Options& o, const std::string& v) { o.phases = parse_phase_names(v, "--only"); }},
    {"--runs", "N", Arity::kOne, "timed runs per phase (default 3)",
     [](Options& o, const std::string& v) {
       o.runs = static_cast<int>(parse_int_in(v, "--runs", 1, 1000000, "timed runs per phase"));
     }},
    {"--warmup", "N", Arity::kOne, "untimed runs per phase first (default 1)",
     [](Options& o, const std::string& v) {
       o.warmup = static_cast<int>(parse_int_in(v, "--warmup", 0, 1000000, "untimed runs per phase"));
     }},
    // generate.
    {"--prompt-ids", "1,2,3", Arity::kOne, "the prompt's token ids (no tokenizer here)",
     [](Options& o, const std::string& v) { o.prompt_ids = parse_prompt_ids(v); }},
    {"--max-new-tokens", "N", Arity::kOne, "stop after N new tokens (default 16)",
     [](Options& o, const std::string& v) {
       o.max_new_tokens = parse_int_in(v, "--max-new-tokens", 1, kInt32Max, "tokens to generate");
     }},
    {"--temperature", "T", Arity::kOne, "[0, 100]; 0 (default) is greedy",
     [](Options& o, const std::string& v) {
       o.sampling.temperature = parse_number_in(v, "--temperature", 0.0, false, 100.0);
     }},
    {"--top-k", "K", Arity::kOne, "sample from the K most likely tokens (0 = off)",
     [](Options& o, const std::string& v) {
       o.sampling.top_k = parse_int_in(v, "--top-k", 0, kInt32Max, "0 = off");
     }},
    {"--top-p", "P", Arity::kOne, "(0, 1]: sample from the smallest set of mass P",
     [](Options& o, const std::string& v) {
       o.sampling.top_p = parse_number_in(v, "--top-p", 0.0, true, 1.0);
     }},
    {"--repetition-penalty", "R", Arity::kOne, "(0, 100], CTRL's rule; 1 = off",
     [](Options& o, const std::string& v) {
       o.sampling.repetition_penalty = parse_number_in(v, "--repetition-penalty", 0.0, true, 100.0);
     }},
    {"--sample-seed", "S", Arity::kOne, "seed of the draws: same seed, same tokens",
     [](Options& o, const std::string& v) {
       o.sampling.seed = static_cast<uint64_t>(parse_int_in(v, "--sample-seed", 0, kInt64Max, "a seed"));
     }},
    {"--stop-token-ids", "7,8", Arity::kOne, "stop after one of these (it is kept)",
     [](Options& o, const std::string& v) { o.stop_token_ids = parse_token_list(v, "--stop-token-ids"); }},
    // serve.
    {"--max-request-bytes", "N", Arity::kOne, "the longest request line (default 64 MiB)",
     [](Options& o, const std::string& v) {
       o.max_request_bytes = static_cast<size_t>(parse_int_in(
           v, "--max-request-bytes", 1024, int64_t{1} << 30, "the longest request line"));
     }},
};

int count(const Given& given, const char* name) {
  const auto it = given.find(name);
  return it == given.end() ? 0 : it->second;
}

void need_bundle(const Subcommand& cmd, const Given& given) {
  if (!count(given, "--bundle")) {
    throw usage_of(cmd, "--bundle DIR is required (the bundle directory); see trt-edge-run " +
                            std::string(cmd.name) + " --help");
  }
}

void check_run(const Subcommand& cmd, const Options&, const Given& given) {
  need_bundle(cmd, given);
  if (count(given, "--phase") + count(given, "--profile") + count(given, "--auto") != 1) {
    throw usage_of(cmd, "pass exactly one of --phase P, --profile N, --auto (the request)");
  }
}

void check_generate(const Subcommand& cmd, const Options&, const Given& given) {
  need_bundle(cmd, given);
  if (!count(given, "--prompt-ids")) {
    throw usage_of(cmd, "--prompt-ids 1,2,3 is required (the prompt's token ids)");
  }
}

void check_bundle_only(const Subcommand& cmd, const Options&, const Given& given) {
  need_bundle(cmd, given);
}

void check_nothing(const Subcommand&, const Options&, const Given&) {}

const std::vector<Subcommand> kSubcommands = {
    {Command::kRun, "run", "one execution under a request (a phase, a pinned profile, or auto)",
     "--bundle DIR (--phase P | --profile N | --auto) [--dims SYM=INT ...]\n"
     "[--seed S] [--inputs DIR [--check-values]] [--outputs DIR] [--bench N] [--json]\n"
     "[--progress] [--no-verify] [--ignore-policy] [--single-thread]",
     loading({"--json", "--phase", "--profile", "--auto", "--dims", "--seed", "--inputs",
      "--check-values", "--outputs", "--bench"}),
     check_run,
     "Without --inputs the inputs are random, the same for the same --seed: integer inputs\n"
     "drawn from their declared values [low, high) (else [0, 2)), floats standard normal, sized\n"
     "by --dims or else the opt of the profile the request names (profile 0's for --auto).\n"
     "--json: \"request\", \"profile\", \"profile_name\", \"outcome\", \"latency_ms\",\n"
     "\"inputs\": [{\"name\",\"shape\",\"dtype\"}], \"outputs\": [...], \"bench\".\n"},
    {Command::kPhases, "phases", "every phase of the runtime policy timed (smoke run, health check)",
     "--bundle DIR [--only all|P,Q] [--runs N] [--warmup N] [--seed S] [--json]\n"
     "[--progress] [--no-verify] [--ignore-policy] [--single-thread]",
     loading({"--json", "--only", "--seed", "--runs", "--warmup"}),
     check_bundle_only,
     "Each phase at its profile's opt shape on random inputs (--seed S): --warmup N untimed\n"
     "runs, then --runs N timed ones; reports median/min/max ms per phase.\n"
     "--json: \"seed\", \"warmup\", \"runs\", \"phases\": [{\"phase\", \"request\", \"profile\",\n"
     "\"profile_name\", \"outcome\", \"inputs\", \"outputs\", \"first_ms\", \"median_ms\", \"min_ms\",\n"
     "\"max_ms\", \"runs_ms\"}].\n"},
    {Command::kLoad, "load", "check and load the bundle, report its mode; execute nothing",
     "--bundle DIR [--json] [--progress] [--no-verify] [--ignore-policy] [--single-thread]",
     loading({"--json"}),
     check_bundle_only,
     "--json: \"phases\": {phase: index or \"auto\"}, \"profiles\": [name, ...],\n"
     "\"peak_rss_bytes\": the process's peak resident set after the load (VmHWM), or null.\n"},
    {Command::kGenerate, "generate", "generation from token ids: prefill, then decode per token",
     "--bundle DIR --prompt-ids 1,2,3 [--max-new-tokens N] [--temperature T]\n"
     "[--top-k K] [--top-p P] [--repetition-penalty R] [--sample-seed S]\n"
     "[--stop-token-ids 7,8] [--json] [--progress] [--no-verify] [--ignore-policy]\n"
     "[--single-thread]",
     loading({"--json", "--prompt-ids", "--max-new-tokens", "--temperature", "--top-k",
      "--top-p", "--repetition-penalty", "--sample-seed", "--stop-token-ids"}),
     check_generate,
     "The prompt runs under the 'prefill' phase, in chunks when longer than its profile takes,\n"
     "then each new token under 'decode', until an eos id or --max-new-tokens. A causal LM\n"
     "(bundle.json llm, KV cache inside the program) or the tiny-LLM contract (caches passed in\n"
     "and out); a request the cache cannot hold is refused first. Greedy unless --temperature > 0.\n"
     "--json: \"request\": \"generate\", \"contract\": \"causal_lm\"|\"tiny_llm\", \"prompt_ids\",\n"
     "\"max_new_tokens\", \"tokens\", \"stop\": \"eos\"|\"stop_token\"|\"max_new_tokens\", \"steps\":\n"
     "[{\"phase\", \"profile\", \"start\", \"seq\", \"ms\"}], \"timings\": {\"prefill_ms\",\n"
     "\"time_to_first_token_ms\", \"decode_ms_per_token\", \"decode_tokens_per_s\", \"tokens_per_s\",\n"
     "\"total_ms\"} (as trt-edge generate --json).\n"},
    {Command::kServe, "serve", "the engine of the device service: JSON lines on stdin and stdout",
     "--bundle DIR [--max-request-bytes N] [--progress] [--no-verify]\n"
     "[--ignore-policy] [--single-thread]",
     loading({"--max-request-bytes"}),
     check_bundle_only,
     "Load once, then requests as JSON lines on stdin, events as JSON lines on stdout (generate\n"
     "with streaming, sampling, cancel and prefix reuse; infer; ping; shutdown): the protocol is\n"
     "docs/engine-protocol.md. A failure to start is the --json error document, on one line.\n"},
    {Command::kVersion, "version", "version, architecture, ExecuTorch version, backends, interface",
     "[--json]", {"--json", "--progress"}, check_nothing,
     "--progress is taken and does nothing (there are no stages), so a parent may pass it to\n"
     "every subcommand.\n"},
};

}  // namespace

const std::vector<Flag>& all_flags() { return kFlags; }
const std::vector<Subcommand>& all_subcommands() { return kSubcommands; }

const Flag* find_flag(const std::string& name) {
  for (const auto& f : kFlags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

const Subcommand* find_subcommand(const std::string& name) {
  for (const auto& c : kSubcommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

bool takes_flag(const Subcommand& cmd, const std::string& name) {
  return std::any_of(cmd.flags.begin(), cmd.flags.end(),
                     [&](const char* f) { return name == f; });
}

RunnerError usage_of(const Subcommand& cmd, const std::string& message) {
  return usage(std::string(cmd.name) + ": " + message);
}

}  // namespace trt_edge::runner::cli
