#include "help_text.h"

#include <cstring>
#include <iomanip>
#include <string>

#include "cli_table.h"
#include "errors.h"

namespace trt_edge::runner::cli {

namespace {

const char* const kAbout = R"(
Run a trt-edge bundle with the ExecuTorch runtime, applying its profile policy.
`trt-edge-run SUBCOMMAND --help` lists a subcommand's flags and its JSON fields.
)";

const char* const kFlagForm = R"(
The older flag-only form is an alias, kept for the agents already on devices: a mode
flag names the subcommand and the other flags stay as they are.
  --bundle DIR --phase P | --profile N | --auto ...   is   run --bundle DIR --phase P ...
  --bundle DIR --phases all|P,Q ...                   is   phases --bundle DIR --only all|P,Q ...
  --bundle DIR --load | --generate | --serve ...      is   load | generate | serve --bundle DIR ...
  --version [--json]                                  is   version [--json]
)";

const char* const kCommon = R"(
--json prints one JSON document on stdout, also when the run fails:
  {"interface": 1, "ok": true, "runner": {...}, "bundle": DIR, "model": {...},
   "target": {"id", "arch"}, "mode": "emulated"|"native", "profile0_only": bool,
   "digests_verified": bool, then the subcommand's fields (SUBCOMMAND --help)}
  {"interface": 1, "ok": false, "runner": {...}, "error": {"kind", "exit_code",
   "message", and when known "file", "input", "phase", "problems": [{"kind",
   "path", "detail"}]}}
--progress prints `trt-edge-run: progress: STAGE` on stderr as each stage starts,
so a parent can name what was running if the process dies. A fatal signal prints
`trt-edge-run: fatal: SIGSEGV while STAGE`; the process still dies of it.
--single-thread runs the model's CPU kernels on the calling thread only (no ExecuTorch
thread pool): what the device service asks of its engine on a machine of two cores or
fewer, so the pool's threads do not take the core its front end needs for every token.

Exit codes (the failure kind; "kind" in the JSON error):
  0  ok
)";

void print_exit_codes(std::ostream& out) {
  for (const auto& row : kErrorKinds) {
    out << "  " << exit_code(row.kind) << "  " << std::left << std::setw(18) << row.name << " "
        << row.meaning << "\n";
  }
  out << "  killed by a signal    a crash inside ExecuTorch (a malformed program); "
         "the parent decides\n";
}

// The synopsis of `cmd`, its continuation lines indented under its first.
void print_synopsis(std::ostream& out, const char* lead, const Subcommand& cmd) {
  out << lead << "trt-edge-run " << cmd.name << " ";
  for (const char* c = cmd.synopsis; *c; ++c) {
    out << *c;
    if (*c == '\n') out << std::string(std::strlen(lead) + 4, ' ');
  }
  out << "\n";
}

}  // namespace

void print_usage(std::ostream& out) {
  out << "usage: trt-edge-run SUBCOMMAND --bundle DIR [FLAGS]   (";
  for (const auto& cmd : all_subcommands()) {
    out << cmd.name << (&cmd == &all_subcommands().back() ? ")\n" : ", ");
  }
  out << "       trt-edge-run SUBCOMMAND --help                 (its flags)\n";
}

void print_help(std::ostream& out) {
  const char* lead = "usage: ";
  for (const auto& cmd : all_subcommands()) {
    print_synopsis(out, lead, cmd);
    lead = "       ";
  }
  out << kAbout << "\nSubcommands:\n";
  for (const auto& cmd : all_subcommands()) {
    out << "  " << std::left << std::setw(10) << cmd.name << cmd.summary << "\n";
  }
  out << kFlagForm << kCommon;
  print_exit_codes(out);
}

void print_subcommand_help(std::ostream& out, const Subcommand& cmd) {
  print_synopsis(out, "usage: ", cmd);
  out << "\ntrt-edge-run " << cmd.name << ": " << cmd.summary << ".\n\nFlags:\n";
  for (const char* name : cmd.flags) {
    const Flag& f = *find_flag(name);
    const std::string shown = std::string(f.name) + (*f.value ? " " : "") + f.value;
    out << "  " << std::left << std::setw(24) << shown << " " << f.help << "\n";
  }
  if (*cmd.details) out << "\n" << cmd.details;
  out << "\nThe JSON error document, --progress and the exit codes: trt-edge-run --help.\n";
}

}  // namespace trt_edge::runner::cli
