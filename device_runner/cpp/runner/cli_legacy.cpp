// The flag-only form of trt-edge-run's command line (before subcommands, and what agents
// already installed on devices still send): a mode flag says the job, the rest are the
// job's own flags. It is rewritten into the subcommand form, then parsed as that form:
//   --bundle B --phase P ...      -> run --bundle B --phase P ...   (--profile N, --auto too)
//   --bundle B --phases X ...     -> phases --bundle B --only X ...
//   --bundle B --load ...         -> load --bundle B ...            (--generate, --serve too)
//   --version [--json]            -> version [--json]               (other flags ignored)
#include <set>

#include "cli_table.h"

namespace trt_edge::runner::cli {

namespace {

struct ModeFlag {
  const char* flag;
  const char* subcommand;
  bool takes_value;
  const char* becomes;  ///< the flag it is in the subcommand form; nullptr: dropped
};

const ModeFlag kModeFlags[] = {
    {"--phase", "run", true, "--phase"},      {"--profile", "run", true, "--profile"},
    {"--auto", "run", false, "--auto"},       {"--phases", "phases", true, "--only"},
    {"--load", "load", false, nullptr},       {"--generate", "generate", false, nullptr},
    {"--serve", "serve", false, nullptr},     {"--version", "version", false, nullptr},
};

const ModeFlag* find_mode(const std::string& arg) {
  for (const auto& m : kModeFlags) {
    if (arg == m.flag) return &m;
  }
  return nullptr;
}

bool has(const std::vector<std::string>& args, const char* flag) {
  for (const auto& a : args) {
    if (a == flag) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> from_flag_form(const std::vector<std::string>& args) {
  // --version answered whatever else was given, and only --json changes it.
  if (has(args, "--version")) {
    return has(args, "--json") ? std::vector<std::string>{"version", "--json"}
                               : std::vector<std::string>{"version"};
  }
  std::set<std::string> subcommands;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const ModeFlag* mode = find_mode(args[i]);
    if (mode == nullptr) {
      rest.push_back(args[i]);
      continue;
    }
    subcommands.insert(mode->subcommand);
    if (mode->becomes != nullptr) rest.push_back(mode->becomes);
    if (mode->takes_value) {
      if (i + 1 >= args.size()) throw usage(std::string(mode->flag) + " needs a value");
      rest.push_back(args[++i]);
    }
  }
  if (subcommands.empty() && (has(args, "--help") || has(args, "-h"))) return {"--help"};
  if (subcommands.size() != 1) {
    throw usage("pass a subcommand (run, phases, load, generate, serve, version; trt-edge-run "
                "--help), or in the older flag-only form exactly one of --phase, --profile, "
                "--auto, --phases, --load, --generate, --serve");
  }
  rest.insert(rest.begin(), *subcommands.begin());
  return rest;
}

}  // namespace trt_edge::runner::cli
