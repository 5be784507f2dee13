// Generation, step 4 of 4: the stats of one generation — every call of the method (phase,
// profile, positions, time), the tokens, why it stopped, the timings trt-edge generate
// --json prints — and the documents and summary lines made from them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generation_plan.h"

namespace trt_edge::runner {

/// One execution of the method during generation.
struct GenerationStep {
  std::string phase;
  int64_t profile = 0;
  int64_t start = 0;  ///< the first position written
  int64_t seq = 0;
  double ms = 0.0;
};

struct GenerationResult {
  std::vector<int64_t> prompt_ids;
  std::vector<int64_t> tokens;
  std::vector<GenerationStep> steps;
  /// "eos", "stop_token", "max_new_tokens", "cache_full" or "cancelled".
  std::string stop = "max_new_tokens";
  int64_t reused_prompt_tokens = 0;  ///< prompt tokens the kept cache already held (not run)
  double first_token_s = 0.0;        ///< from the first prompt call to the first token
  double total_s = 0.0;              ///< from the first prompt call to the last token

  /// How many calls carried the prompt (each later call made one new token).
  size_t prompt_calls() const;
  /// The timings trt-edge generate --json prints, under the same names.
  nlohmann::ordered_json timings() const;
};

/// A duration in ms rounded as the documents print it (3 decimals).
double round_ms(double ms);

/// The generation fields of the --json document: "request", "contract", "prompt_ids",
/// "max_new_tokens", "tokens", "stop", "steps" [{"phase", "profile", "start", "seq", "ms"}],
/// "timings".
nlohmann::ordered_json generation_json(const GenerationPlan& plan, const GenerationResult& result,
                                       int64_t max_new_tokens);

/// "steps" alone, as generation_json and the service's done event carry them.
nlohmann::ordered_json steps_json(const GenerationResult& result);

/// The summary printed on stderr in plain mode: prefill, decode, stop (one line each).
std::vector<std::string> generation_summary(const GenerationResult& result,
                                            const std::string& mode);

}  // namespace trt_edge::runner
