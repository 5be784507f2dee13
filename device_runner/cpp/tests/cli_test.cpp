// trt-edge-run's command line (cli_options.h, cli_table.h), as a plain program: each
// subcommand reads its own flags; the flag-only form gives the same options as its
// subcommand; a flag of another subcommand, an unknown one, a missing value and a missing
// request are usage errors naming the subcommand and the flag; every subcommand lists only
// flags of the table, and every flag of the table belongs to a subcommand.
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli_options.h"
#include "cli_table.h"

using namespace trt_edge::runner;
using namespace trt_edge::runner::cli;

namespace {

int failures = 0;

#define CHECK(cond)                                               \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                 \
    }                                                             \
  } while (0)

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "trt-edge-run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// The message of the usage error `args` raise, or "" when they parse.
std::string refusal(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const RunnerError& e) {
    return e.kind() == ErrorKind::kUsage ? e.what() : "not a usage error";
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void subcommands_read_their_flags() {
  const Options run = parse({"run", "--bundle", "B", "--phase", "decode", "--dims", "seq=4",
                             "batch=2", "--seed", "7", "--bench", "3", "--json"});
  CHECK(run.command == Command::kRun && run.bundle == "B" && run.phase == "decode");
  CHECK(run.dims.at("seq") == 4 && run.dims.at("batch") == 2 && run.seed == 7);
  CHECK(run.bench == 3 && run.json);
  const Options phases = parse({"phases", "--bundle", "B", "--only", "a,b", "--runs", "5"});
  CHECK(phases.command == Command::kPhases && phases.runs == 5 && phases.warmup == 1);
  CHECK((phases.phases == std::vector<std::string>{"a", "b"}));
  CHECK(parse({"phases", "--bundle", "B"}).phases.empty());  // all
  const Options gen = parse({"generate", "--bundle", "B", "--prompt-ids", "1,2", "--top-k", "4"});
  CHECK(gen.command == Command::kGenerate && gen.prompt_ids.size() == 2 && gen.sampling.top_k == 4);
  const Options serve = parse({"serve", "--bundle", "B", "--max-request-bytes", "4096"});
  CHECK(serve.command == Command::kServe && serve.max_request_bytes == 4096);
  CHECK(parse({"load", "--bundle", "B", "--no-verify"}).verify == false);
  CHECK(parse({"version", "--json", "--progress"}).command == Command::kVersion);
}

void the_flag_form_is_its_subcommand() {
  CHECK(from_flag_form({"--bundle", "B", "--phases", "all", "--runs", "2"}) ==
        (std::vector<std::string>{"phases", "--bundle", "B", "--only", "all", "--runs", "2"}));
  CHECK(from_flag_form({"--bundle", "B", "--serve"}) ==
        (std::vector<std::string>{"serve", "--bundle", "B"}));
  CHECK(from_flag_form({"--bundle", "B", "--auto", "--json"}) ==
        (std::vector<std::string>{"run", "--bundle", "B", "--auto", "--json"}));
  CHECK(from_flag_form({"--bundle", "B", "--version", "--progress", "--json"}) ==
        (std::vector<std::string>{"version", "--json"}));
  const Options old = parse({"--bundle", "B", "--generate", "--prompt-ids", "3", "--json"});
  const Options now = parse({"generate", "--bundle", "B", "--prompt-ids", "3", "--json"});
  CHECK(old.command == now.command && old.prompt_ids == now.prompt_ids && old.json == now.json);
  CHECK(parse({"--bundle", "B", "--load"}).command == Command::kLoad);
}

void refusals_name_the_subcommand_and_the_flag() {
  CHECK(contains(refusal({"run", "--bundle", "B", "--auto", "--runs", "2"}),
                 "run: --runs is not a flag of run; it goes with phases"));
  CHECK(contains(refusal({"serve", "--bundle", "B", "--json"}),
                 "serve: --json is not a flag of serve; it goes with run, phases, load"));
  CHECK(contains(refusal({"run", "--bundle", "B", "--frob"}), "run: unknown flag --frob"));
  CHECK(contains(refusal({"run", "--bundle", "B", "--phase"}), "run: --phase needs a value"));
  CHECK(contains(refusal({"run", "--bundle", "B"}), "run: pass exactly one of --phase P"));
  CHECK(contains(refusal({"run", "--bundle", "B", "--auto", "--auto"}), "exactly one of"));
  CHECK(contains(refusal({"run", "--auto"}), "run: --bundle DIR is required"));
  CHECK(contains(refusal({"run", "--bundle", "B", "--profile", "-1"}), "never negative"));
  CHECK(contains(refusal({"generate", "--bundle", "B"}), "generate: --prompt-ids 1,2,3 is required"));
  CHECK(contains(refusal({"phases", "--bundle", "B", "--runs", "0"}), "phases: --runs 0: must be"));
  CHECK(contains(refusal({"run", "--bundle", "B", "stray"}), "unexpected argument 'stray'"));
  CHECK(contains(refusal({"walk"}), "unknown subcommand 'walk'"));
  CHECK(contains(refusal({}), "no subcommand"));
  CHECK(contains(refusal({"--bundle", "B", "--load", "--serve"}), "exactly one of --phase"));
  CHECK(contains(refusal({"--bundle", "B"}), "exactly one of --phase"));
}

void the_tables_agree() {
  for (const auto& cmd : all_subcommands()) {
    for (const char* name : cmd.flags) CHECK(find_flag(name) != nullptr);
  }
  for (const auto& flag : all_flags()) {
    bool owned = false;
    for (const auto& cmd : all_subcommands()) owned = owned || takes_flag(cmd, flag.name);
    CHECK(owned);
  }
}

}  // namespace

int main() {
  subcommands_read_their_flags();
  the_flag_form_is_its_subcommand();
  refusals_name_the_subcommand_and_the_flag();
  the_tables_agree();
  if (failures) std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
