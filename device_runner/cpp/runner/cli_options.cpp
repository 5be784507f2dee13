// trt-edge-run's command line: the subcommand, then its flags, read against the tables of
// cli_table.cpp; the older flag-only form is first rewritten into its subcommand
// (cli_legacy.cpp), so both forms are parsed, checked and refused the same way.
#include "cli_options.h"

#include <cstdlib>
#include <iostream>

#include "cli_table.h"
#include "help_text.h"

namespace trt_edge::runner::cli {

namespace {

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h"; }

bool is_flag(const std::string& arg) { return arg.rfind("--", 0) == 0; }

std::string see_help(const Subcommand& cmd) {
  return "; see trt-edge-run " + std::string(cmd.name) + " --help";
}

// `arg` is not a flag of `cmd`: say whether it is a flag at all, and which subcommands take it.
RunnerError not_a_flag(const Subcommand& cmd, const std::string& arg) {
  if (!is_flag(arg)) {
    return usage_of(cmd, "unexpected argument '" + arg + "': " + cmd.name + " takes flags only" +
                             see_help(cmd));
  }
  if (find_flag(arg) == nullptr) return usage_of(cmd, "unknown flag " + arg + see_help(cmd));
  std::string owners;
  for (const auto& other : all_subcommands()) {
    if (takes_flag(other, arg)) owners += (owners.empty() ? "" : ", ") + std::string(other.name);
  }
  return usage_of(cmd, arg + " is not a flag of " + cmd.name + "; it goes with " + owners +
                           see_help(cmd));
}

// Applies flag `f` found at args[i], with its value(s); moves i past them.
void apply_flag(const Subcommand& cmd, const Flag& f, const std::vector<std::string>& args,
                size_t& i, Options& o) {
  try {
    if (f.arity == Arity::kNone) {
      f.apply(o, "");
    } else if (f.arity == Arity::kMany) {
      while (i + 1 < args.size() && !is_flag(args[i + 1])) f.apply(o, args[++i]);
    } else if (i + 1 >= args.size()) {
      throw usage(std::string(f.name) + " needs a value (" + f.name + " " + f.value + ")");
    } else {
      f.apply(o, args[++i]);
    }
  } catch (const RunnerError& e) {
    throw usage_of(cmd, e.what());
  }
}

// `args` = NAME FLAGS...: the options of subcommand `cmd`, checked across its flags.
Options parse_subcommand(const Subcommand& cmd, const std::vector<std::string>& args) {
  Options o;
  o.command = cmd.command;
  Given given;
  for (size_t i = 1; i < args.size(); ++i) {
    if (is_help(args[i])) {
      print_subcommand_help(std::cout, cmd);
      std::exit(0);
    }
    if (!takes_flag(cmd, args[i])) throw not_a_flag(cmd, args[i]);
    const Flag& f = *find_flag(args[i]);
    ++given[f.name];
    apply_flag(cmd, f, args, i, o);
  }
  cmd.check(cmd, o, given);
  return o;
}

std::string subcommand_names() {
  std::string names;
  for (const auto& c : all_subcommands()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

// `help` or `help SUBCOMMAND`: prints it and exits 0.
[[noreturn]] void print_help_and_exit(const std::vector<std::string>& args) {
  const Subcommand* cmd = args.size() > 1 ? find_subcommand(args[1]) : nullptr;
  if (cmd != nullptr) {
    print_subcommand_help(std::cout, *cmd);
  } else {
    print_help(std::cout);
  }
  std::exit(0);
}

}  // namespace

Options parse_command_line(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    throw usage("no subcommand: pass one of " + subcommand_names() + " (trt-edge-run --help)");
  }
  if (is_flag(args[0]) || args[0] == "-h") args = from_flag_form(args);
  if (is_help(args[0]) || args[0] == "help") print_help_and_exit(args);
  const Subcommand* cmd = find_subcommand(args[0]);
  if (cmd == nullptr) {
    throw usage("unknown subcommand '" + args[0] + "': pass one of " + subcommand_names() +
                " (trt-edge-run --help)");
  }
  return parse_subcommand(*cmd, args);
}

}  // namespace trt_edge::runner::cli
