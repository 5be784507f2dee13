// trt-edge-run's command line as data: every flag once (its value, its help, how it sets
// Options), every subcommand once (its flags, its synopsis, the check run after parsing).
// The parser (cli_options.cpp), the help (help_text.cpp) and the old flag-only form
// (cli_legacy.cpp) all read these tables; a flag a subcommand does not list is refused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli_options.h"

namespace trt_edge::runner::cli {

/// How many values a flag takes: none (a switch), one, or every word up to the next flag.
enum class Arity { kNone, kOne, kMany };

/// How many times each flag was given, by name (for the checks across flags).
using Given = std::map<std::string, int>;

struct Flag {
  const char* name;   ///< "--phase"
  const char* value;  ///< "P" (shown in help), "" for a switch
  Arity arity;
  const char* help;
  void (*apply)(Options& o, const std::string& value);  ///< value "" for a switch
};

struct Subcommand {
  Command command;
  const char* name;      ///< "run"
  const char* summary;   ///< one line for the list of subcommands
  const char* synopsis;  ///< the usage line(s) after "trt-edge-run NAME"
  std::vector<const char*> flags;
  /// The rules across flags (exactly one request, a required flag); throws usage errors.
  void (*check)(const Subcommand& cmd, const Options& o, const Given& given);
  const char* details;  ///< the text after the flags in `trt-edge-run NAME --help`
};

/// Every flag, in help order.
const std::vector<Flag>& all_flags();
/// Every subcommand, in help order.
const std::vector<Subcommand>& all_subcommands();

/// The flag called `name`, or nullptr.
const Flag* find_flag(const std::string& name);
/// The subcommand called `name`, or nullptr.
const Subcommand* find_subcommand(const std::string& name);
/// Whether `cmd` takes the flag `name`.
bool takes_flag(const Subcommand& cmd, const std::string& name);

/// The subcommand form of the flag-only form `args` (argv without the program):
/// `--bundle B --phases all --runs 3` -> `phases --bundle B --only all --runs 3`.
/// A usage error when `args` names no mode, or two.
std::vector<std::string> from_flag_form(const std::vector<std::string>& args);

/// A usage error of subcommand `cmd`: "NAME: message".
RunnerError usage_of(const Subcommand& cmd, const std::string& message);

}  // namespace trt_edge::runner::cli
