// The values of trt-edge-run's flags: integers and numbers inside their ranges, phase names
// and token-id lists; each refusal names the flag, the value and what is allowed.
#include "cli_options.h"

#include <cmath>
#include <limits>
#include <sstream>

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

std::vector<std::string> parse_phase_names(const std::string& text, const std::string& flag) {
  if (text == "all") return {};
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) throw usage(flag + " " + text + ": expected all, or phase names P,Q");
    names.push_back(name);
  }
  if (names.empty()) throw usage(flag + " needs all, or phase names P,Q");
  return names;
}

std::vector<int64_t> parse_prompt_ids(const std::string& text) {
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

std::vector<int64_t> parse_token_list(const std::string& text, const std::string& flag) {
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

}  // namespace trt_edge::runner::cli
