// trt-edge-run --help and SUBCOMMAND --help: the documentation of the runner's command line
// and machine interface (docs/runner-interface.md repeats it), made from the tables of
// cli_table.cpp: the synopsis of each subcommand, its flags, the JSON documents --json prints
// (versioned by "interface"), and the exit code of each failure kind (errors.h).
#pragma once

#include <ostream>

namespace trt_edge::runner::cli {

struct Subcommand;

/// The synopsis of every subcommand, printed after a usage error at a terminal.
void print_usage(std::ostream& out);

/// The synopses, the subcommands, the flag-only alias, the JSON documents and the exit
/// codes (what --help prints).
void print_help(std::ostream& out);

/// `trt-edge-run NAME --help`: its synopsis, its flags and what it prints.
void print_subcommand_help(std::ostream& out, const Subcommand& cmd);

}  // namespace trt_edge::runner::cli
