#include "generation_stats.h"

#include <cmath>
#include <set>
#include <sstream>

namespace trt_edge::runner {
namespace {

using Json = nlohmann::ordered_json;

double round_to(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

std::string profiles_text(const std::vector<GenerationStep>& steps) {
  std::set<int64_t> profiles;
  for (const auto& s : steps) profiles.insert(s.profile);
  std::string text = "[";
  for (int64_t p : profiles) text += (text.size() > 1 ? ", " : "") + std::to_string(p);
  return text + "]";
}

std::string number_or_none(const Json& value) {
  if (value.is_null()) return "None";
  std::ostringstream out;
  out << value.get<double>();
  return out.str();
}

}  // namespace

double round_ms(double ms) { return round_to(ms, 3); }

size_t GenerationResult::prompt_calls() const {
  int64_t covered = 0;
  size_t calls = 0;
  const auto prompt_run = static_cast<int64_t>(prompt_ids.size()) - reused_prompt_tokens;
  for (const auto& step : steps) {
    if (covered >= prompt_run) break;
    covered += step.seq;
    ++calls;
  }
  return calls;
}

Json GenerationResult::timings() const {
  // The prompt's calls count as prefill whatever phase ran them: a 1-token prompt, or a
  // chunk leftover the prefill profile cannot take, runs under decode but is still prompt.
  double prefill_ms = 0.0, decode_ms = 0.0;
  const size_t first_decode = prompt_calls();
  for (size_t i = 0; i < first_decode; ++i) prefill_ms += steps[i].ms;
  const size_t decode_calls = steps.size() - first_decode;
  for (size_t i = first_decode; i < steps.size(); ++i) decode_ms += steps[i].ms;
  const double decode_s = decode_ms / 1e3;
  auto or_null = [](bool known, double value) { return known ? Json(value) : Json(nullptr); };
  return Json{
      {"prefill_ms", round_to(prefill_ms, 3)},
      {"time_to_first_token_ms", round_to(first_token_s * 1e3, 3)},
      {"decode_ms_per_token",
       or_null(decode_calls > 0,
               round_to(decode_ms / static_cast<double>(decode_calls ? decode_calls : 1), 3))},
      {"decode_tokens_per_s",
       or_null(decode_s > 0,
               round_to(static_cast<double>(decode_calls) / (decode_s > 0 ? decode_s : 1), 2))},
      {"tokens_per_s",
       or_null(total_s > 0,
               round_to(static_cast<double>(tokens.size()) / (total_s > 0 ? total_s : 1), 2))},
      {"total_ms", round_to(total_s * 1e3, 3)}};
}


Json steps_json(const GenerationResult& result) {
  Json steps = Json::array();
  for (const auto& s : result.steps) {
    steps.push_back(Json{{"phase", s.phase},
                         {"profile", s.profile},
                         {"start", s.start},
                         {"seq", s.seq},
                         {"ms", s.ms}});
  }
  return steps;
}

Json generation_json(const GenerationPlan& plan, const GenerationResult& result,
                     int64_t max_new_tokens) {
  const Json steps = steps_json(result);
  return Json{{"request", "generate"},
              {"contract", to_string(plan.contract)},
              {"prompt_ids", result.prompt_ids},
              {"max_new_tokens", max_new_tokens},
              {"tokens", result.tokens},
              {"stop", result.stop},
              {"steps", steps},
              {"timings", result.timings()}};
}

std::vector<std::string> generation_summary(const GenerationResult& result,
                                            const std::string& mode) {
  const Json timings = result.timings();
  const size_t split = result.prompt_calls();
  const std::vector<GenerationStep> prompt_steps(
      result.steps.begin(), result.steps.begin() + static_cast<std::ptrdiff_t>(split));
  const std::vector<GenerationStep> decode_steps(
      result.steps.begin() + static_cast<std::ptrdiff_t>(split), result.steps.end());
  std::vector<std::string> lines;
  std::ostringstream line;
  line << "prefill: " << result.prompt_ids.size() - static_cast<size_t>(result.reused_prompt_tokens)
       << " token(s) in " << prompt_steps.size()
       << " call(s) on profile(s) " << profiles_text(prompt_steps) << ", "
       << number_or_none(timings["prefill_ms"]) << " ms (first token after "
       << number_or_none(timings["time_to_first_token_ms"]) << " ms)";
  lines.push_back(line.str());
  if (!decode_steps.empty()) {
    line.str("");
    line << "decode: " << decode_steps.size() << " token(s) on profile(s) "
         << profiles_text(decode_steps) << ", " << number_or_none(timings["decode_ms_per_token"])
         << " ms/token (" << number_or_none(timings["decode_tokens_per_s"]) << " tokens/s, " << mode
         << " mode)";
    lines.push_back(line.str());
  }
  lines.push_back("stop: " + result.stop + " after " + std::to_string(result.tokens.size()) +
                  " new token(s)");
  return lines;
}

}  // namespace trt_edge::runner
