// Reading a trt-edge bundle directory: bundle.json (the contract written by
// trt_edge_runner/bundle_format.py). What the directory may hold is the integrity
// rule's job (bundle_integrity.h); read_bundle reads bundle.json through it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bundle_integrity.h"
#include "errors.h"
#include "trt_edge/profile_selection.h"

namespace trt_edge::runner {

/// One input or output: `shape` mixes static extents and symbol names.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<std::variant<int64_t, std::string>> shape;
  std::optional<std::pair<int64_t, int64_t>> values;  ///< [low, high) for integer inputs.
};

struct DimRange {
  int64_t min = 0;
  int64_t opt = 0;
  int64_t max = 0;
};

struct Profile {
  std::string name;
  std::map<std::string, DimRange> dims;
};

/// A phase's target: a profile index, or nullopt for "auto".
using PhaseTarget = std::optional<int64_t>;

/// The versions of bundle.json's `llm` section this runner reads: 1, 2 (built with
/// `attention: filled`: every call also feeds the attended window, `inputs.window`) and 3
/// (built with `runtime.slots` N > 1: the program holds N KV caches, `inputs.slot`).
inline constexpr int64_t kLlmSectionVersion = 1;
inline constexpr int64_t kLlmSectionWindowVersion = 2;
inline constexpr int64_t kLlmSectionSlotsVersion = 3;

/// bundle.json `llm` (trt_edge_runner.bundle_format.LlmSection): a causal LM built by the
/// Hugging Face recipe. The method takes `tokens_input` [1, seq] and `positions_input`
/// [seq] (the cache slots written) and returns `logits_output` [1, vocab_size] for the last
/// position; the KV cache lives inside the program, kept while the method stays loaded.
/// Version 2 adds `window_input` [W], whose *length* is how many cache slots attention
/// reads: W = window_length(start + seq) (contents 0..W-1; only the length is read).
/// Version 3 (slots): tokens [batch, seq], positions [batch, seq] and `slot_input` [batch]
/// (the cache each row reads and writes, in [0, slots)); logits [batch, vocab_size].
/// Read strictly: a section this runner cannot honour is a bundle_format refusal.
struct LlmSection {
  int64_t version = kLlmSectionVersion;
  int64_t max_cache_len = 0;
  int64_t vocab_size = 0;
  std::string tokens_input;
  std::string positions_input;
  std::string logits_output;
  size_t tokens_index = 0;     ///< index of tokens_input in Bundle::inputs
  size_t positions_index = 0;  ///< index of positions_input in Bundle::inputs
  size_t logits_index = 0;     ///< index of logits_output in Bundle::outputs
  std::vector<int64_t> eos_token_ids;
  std::optional<std::string> window_input;  ///< version 2: the attended window's input
  size_t window_index = 0;                  ///< its index in Bundle::inputs
  int64_t window_bucket = 1;                ///< version 2: window lengths are multiples of it
  std::optional<std::string> slot_input;    ///< version 3: the input naming each row's cache
  size_t slot_index = 0;                    ///< its index in Bundle::inputs
  int64_t slots = 1;                        ///< version 3: how many KV caches the program holds

  /// The window a call writing positions up to `end - 1` feeds: `end` rounded up to
  /// window_bucket, capped at max_cache_len (LlmSection.window_length in Python).
  int64_t window_length(int64_t end) const;
};

/// The version of bundle.json's `generation` section this runner reads.
inline constexpr int64_t kGenerationSectionVersion = 1;

/// bundle.json `generation` (trt_edge_runner.bundle_format.GenerationSection): a generation
/// contract whose caches cross the call boundary, declared rather than recognised by input
/// names. `tiny_llm`: the method takes `tokens` [1, seq] and `start_position` [1]; every other
/// input is a cache, in the order of the outputs other than `logits`, which each call returns
/// updated and the next call takes back.
struct GenerationSection {
  std::string contract;  ///< "tiny_llm"
  std::string tokens_input;
  std::string start_input;
  std::string logits_output;
  size_t tokens_index = 0;  ///< indices in Bundle::inputs / Bundle::outputs
  size_t start_index = 0;
  size_t logits_index = 0;
};

struct Bundle {
  std::string dir;
  std::string name;
  std::string version;
  std::string method;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Profile> profiles;
  std::map<std::string, PhaseTarget> phases;
  std::map<std::string, FileEntry> files;
  std::vector<std::string> delegate_backends;  ///< delegates[].backend_id: decides the mode
  /// The first TensorRT-RTX engine's record (delegates[].engine with flavour tensorrt_rtx):
  /// its version and compute capabilities; empty version: the bundle holds none. No runner
  /// can execute one (docs/tensorrt.md), so opening such a bundle is refused with this.
  std::string rtx_engine_version;
  std::string rtx_compute_capabilities;
  std::string target_arch;  ///< target.arch ("x86_64", "aarch64"); empty: any architecture
  std::string target_id;    ///< target.id, for messages
  std::optional<LlmSection> llm;  ///< only for causal LMs built by the Hugging Face recipe
  std::optional<GenerationSection> generation;  ///< a declared tiny-LLM contract

  /// Bounds indexed [profile][input], as `ProfileTable.from_bundle` builds them in Python.
  ProfileTable profile_table() const;
  /// Concrete shape of input `i` with its symbols taken from `symbols`.
  std::vector<int64_t> shape_of(const TensorSpec& spec,
                                const std::map<std::string, int64_t>& symbols) const;
};

/// Parses `dir/bundle.json` (read by read_document: no link, no special file,
/// size-capped); throws RunnerError (kBundleFormat) naming the file and the JSON path at fault.
Bundle read_bundle(const std::string& dir);

/// read_bundle's parse of bundle.json's `text`, held to bundle.schema.json (what
/// trt_edge_runner.bundle_format.BundleManifest refuses, this refuses naming the same JSON
/// path: "SOURCE: model.name: ..."). `source` names the document in messages; `dir` is
/// Bundle::dir. Used by trt_edge_bundle_document_conformance on the shared vectors.
Bundle parse_bundle(const std::string& text, const std::string& source, const std::string& dir);

/// The integrity rule on the whole bundle directory: throws one BundleProblemsError
/// naming every problem (sha256 too when built with OpenSSL; see verifies_digests()).
void verify_files(const Bundle& bundle);

/// The architecture this binary was compiled for ("x86_64", "aarch64", ...). Decided at
/// compile time: under qemu-user `uname` reports the host, not the code being run.
const char* compiled_arch() noexcept;

/// Throws RunnerError (kTargetMismatch) when the bundle names a target.arch other than
/// compiled_arch(), naming both and what to do.
void check_target(const Bundle& bundle);

}  // namespace trt_edge::runner
