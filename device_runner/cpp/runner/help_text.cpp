#include "help_text.h"

#include <iomanip>

#include "errors.h"

namespace trt_edge::runner::cli {

const char* const kUsage =
    "usage: trt-edge-run --bundle DIR (--phase P | --profile N | --auto | --phases all|P,Q |\n"
    "                    --load) [--dims sym=v ...] [--seed S] [--inputs DIR [--check-values]]\n"
    "                    [--outputs DIR]\n"
    "                    [--runs N] [--warmup N] [--bench N] [--json] [--progress]\n"
    "                    [--no-verify] [--ignore-policy] [--single-thread]\n"
    "       trt-edge-run --bundle DIR --generate --prompt-ids 1,2,3 [--max-new-tokens N]\n"
    "                    [--temperature T] [--top-k K] [--top-p P] [--repetition-penalty R]\n"
    "                    [--sample-seed S] [--stop-token-ids 7,8]\n"
    "                    [--json] [--progress] [--no-verify] [--ignore-policy]\n"
    "                    [--single-thread]\n"
    "       trt-edge-run --bundle DIR --serve [--max-request-bytes N] [--progress]\n"
    "                    [--no-verify] [--ignore-policy] [--single-thread]\n"
    "       trt-edge-run --version [--json]\n";

const char* const kHelp = R"(
Run a trt-edge bundle with the ExecuTorch runtime, applying its profile policy.

Requests (exactly one):
  --phase P          a phase of the bundle's runtime policy (e.g. decode)
  --profile N        pin profile N
  --auto             select from the input shapes (sticky first-fit)
  --phases all|P,Q   every phase of the runtime policy (or those named), each at its
                     profile's opt shape: --warmup N untimed runs (default 1), then
                     --runs N timed ones (default 3); reports median/min/max ms per phase
  --load             check and load the bundle, report its mode; execute nothing
  --generate         generation: --prompt-ids 1,2,3 (token ids; no tokenizer here)
                     under the 'prefill' phase, in chunks when longer than its profile
                     takes, then each new token under 'decode', until an eos id or
                     --max-new-tokens N (default 16). A causal LM (bundle.json llm, KV
                     cache inside the program) or the tiny-LLM contract (caches passed
                     in and out); a request the cache cannot hold is refused first
                     Sampling (greedy unless --temperature > 0): --temperature [0, 100],
                     --top-k (0 = off), --top-p (0, 1], --repetition-penalty (0, 100]
                     (CTRL's rule; 1 = off), --sample-seed S (same seed, same tokens),
                     --stop-token-ids 7,8 (stop after one of these; it is kept)
  --serve            the engine of the device service: load once, then requests as JSON
                     lines on stdin, events as JSON lines on stdout (generate with
                     streaming, sampling, cancel and prefix reuse; infer; ping; shutdown);
                     the protocol is docs/engine-protocol.md

Inputs: --inputs DIR holds one <input name>.npy per input (np.save); without it,
inputs are random, the same for the same --seed S (default 0): integer inputs drawn
from their declared values [low, high) (else [0, 2)), floats standard normal, sized
by --dims sym=v or else the opt of the profile the request names (profile 0's for
auto). --check-values refuses --inputs integers outside their declared values.
--outputs DIR receives <output name>.npy per output. --bench N times N
executions after a warm-up, next to a raw Module::execute on the same inputs.

--json prints one JSON document on stdout, also when the run fails:
  {"interface": 1, "ok": true, "runner": {...}, "bundle": DIR, "model": {...},
   "target": {"id", "arch"}, "mode": "emulated"|"native", "profile0_only": bool,
   "digests_verified": bool, then per request:
   --phase/--profile/--auto: "request", "profile", "profile_name", "outcome",
     "latency_ms", "inputs": [{"name","shape","dtype"}], "outputs": [...], "bench"
   --phases: "seed", "warmup", "runs", "phases": [{"phase", "request", "profile",
     "profile_name", "outcome", "inputs", "outputs", "first_ms", "median_ms",
     "min_ms", "max_ms", "runs_ms"}]
   --load: "phases": {phase: index or "auto"}, "profiles": [name, ...],
     "peak_rss_bytes": the process's peak resident set after the load (VmHWM), or null
   --generate: "request": "generate", "contract": "causal_lm"|"tiny_llm",
     "prompt_ids", "max_new_tokens", "tokens", "stop": "eos"|"stop_token"|"max_new_tokens",
     "steps": [{"phase", "profile", "start", "seq", "ms"}], "timings":
     {"prefill_ms", "time_to_first_token_ms", "decode_ms_per_token",
     "decode_tokens_per_s", "tokens_per_s", "total_ms"} (as trt-edge generate --json)}
  {"interface": 1, "ok": false, "runner": {...}, "error": {"kind", "exit_code",
   "message", and when known "file", "input", "phase", "problems": [{"kind",
   "path", "detail"}]}}
--progress prints `trt-edge-run: progress: STAGE` on stderr as each stage starts,
so a parent can name what was running if the process dies. A fatal signal prints
`trt-edge-run: fatal: SIGSEGV while STAGE`; the process still dies of it.
--single-thread runs the model's CPU kernels on the calling thread only (no ExecuTorch
thread pool): what the device service asks of its engine on a machine of two cores or
fewer, so the pool's threads do not take the core its front end needs for every token.
--version [--json]: version, architecture, ExecuTorch version, backends, interface.

Exit codes (the failure kind; "kind" in the JSON error):
  0  ok
)";

void print_help(std::ostream& out) {
  out << kUsage << kHelp;
  for (const auto& row : kErrorKinds) {
    out << "  " << exit_code(row.kind) << "  " << std::left << std::setw(18) << row.name << " "
        << row.meaning << "\n";
  }
  out << "  killed by a signal    a crash inside ExecuTorch (a malformed program); "
         "the parent decides\n";
}

}  // namespace trt_edge::runner::cli
