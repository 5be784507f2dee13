// bundle.json → Bundle.
#include "bundle.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

namespace trt_edge::runner {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void bad(const std::string& source, const std::string& path,
                      const std::string& message) {
  throw RunnerError(ErrorKind::kBundleFormat, source + ": " + path + ": " + message).with_file(source);
}

const json& field(const json& obj, const char* key, const std::string& source,
                  const std::string& path) {
  if (!obj.is_object() || !obj.contains(key)) {
    bad(source, path.empty() ? key : path + "." + key, "missing");
  }
  return obj.at(key);
}

std::string join(const std::string& path, const char* key) {
  return path.empty() ? key : path + "." + key;
}

/// No lower bound for checked_int.
constexpr int64_t kNoMinimum = std::numeric_limits<int64_t>::min();

/// `v` as a 64-bit signed integer >= `minimum`, refused naming `path` otherwise (a boolean
/// or 1.5 is not an integer).
int64_t checked_int(const json& v, const std::string& source, const std::string& path,
                    int64_t minimum) {
  if (!v.is_number_integer()) bad(source, path, "expected an integer, got " + v.dump());
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    bad(source, path, "expected a 64-bit signed integer, got " + v.dump());
  }
  const int64_t n = v.get<int64_t>();
  if (n < minimum) bad(source, path, "must be >= " + std::to_string(minimum) + ", got " + v.dump());
  return n;
}

/// A required string field, refused naming its path when absent, not a string, or empty.
std::string name_field(const json& obj, const char* key, const std::string& source,
                       const std::string& path) {
  const json& v = field(obj, key, source, path);
  if (!v.is_string()) bad(source, join(path, key), "expected a string, got " + v.dump());
  if (v.get<std::string>().empty()) bad(source, join(path, key), "must not be empty");
  return v.get<std::string>();
}

/// A required field that must be a JSON object.
const json& object_field(const json& obj, const char* key, const std::string& source,
                         const std::string& path) {
  const json& v = field(obj, key, source, path);
  if (!v.is_object()) bad(source, join(path, key), "expected an object, got " + v.dump());
  return v;
}

/// A required field that must be a JSON list.
const json& list_field(const json& obj, const char* key, const std::string& source,
                       const std::string& path) {
  const json& v = field(obj, key, source, path);
  if (!v.is_array()) bad(source, join(path, key), "expected a list, got " + v.dump());
  return v;
}

TensorSpec tensor(const json& t, const std::string& source, const std::string& path) {
  if (!t.is_object()) bad(source, path, "expected an object, got " + t.dump());
  TensorSpec spec;
  spec.name = name_field(t, "name", source, path);
  spec.dtype = name_field(t, "dtype", source, path);
  const json& shape = field(t, "shape", source, path);
  if (!shape.is_array()) bad(source, path + ".shape", "expected a list, got " + shape.dump());
  for (size_t i = 0; i < shape.size(); ++i) {
    const json& d = shape[i];
    const std::string at = path + ".shape[" + std::to_string(i) + "]";
    if (d.is_number_integer()) {
      spec.shape.emplace_back(checked_int(d, source, at, 0));
    } else if (d.is_string() && !d.get<std::string>().empty()) {
      spec.shape.emplace_back(d.get<std::string>());
    } else {
      bad(source, at, "expected a non-negative integer or a symbol name, got " + d.dump());
    }
  }
  if (t.contains("values") && !t.at("values").is_null()) {
    const json& v = t.at("values");
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() ||
        !v[1].is_number_integer()) {
      bad(source, path + ".values", "expected [low, high] (two integers) or null, got " + v.dump());
    }
    spec.values = std::make_pair(checked_int(v[0], source, path + ".values", kNoMinimum),
                                 checked_int(v[1], source, path + ".values", kNoMinimum));
  }
  return spec;
}

// Typed fields of the `llm` section, each refused with its JSON path when absent or of
// another type (a boolean is not an integer), as trt_edge_runner.bundle_format reads them.
int64_t int_field(const json& obj, const char* key, const std::string& source,
                  const std::string& path, int64_t minimum = kNoMinimum) {
  return checked_int(field(obj, key, source, path), source, join(path, key), minimum);
}

std::string string_field(const json& obj, const char* key, const std::string& source,
                         const std::string& path) {
  const json& v = field(obj, key, source, path);
  if (!v.is_string()) bad(source, join(path, key), "expected a string, got " + v.dump());
  return v.get<std::string>();
}

void require_bool(const json& obj, const char* key, const std::string& source,
                  const std::string& path) {
  const json& v = field(obj, key, source, path);
  if (!v.is_boolean()) bad(source, path + "." + key, "expected true or false, got " + v.dump());
}

template <typename Spec>
size_t index_of(const std::vector<Spec>& specs, const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) return i;
  }
  return specs.size();
}

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string names;
  for (const auto& s : specs) names += (names.empty() ? "'" : ", '") + s.name + "'";
  return "[" + names + "]";
}

/// The index of the input an `llm.inputs` role names; a format error at `llm.inputs.ROLE`
/// when the method has no such input.
size_t role_input(const Bundle& b, const std::string& name, const std::string& role,
                  const std::string& source) {
  const size_t index = index_of(b.inputs, name);
  if (index == b.inputs.size()) {
    bad(source, "llm.inputs." + role, "'" + name + "' is not an input " + names_of(b.inputs));
  }
  return index;
}

/// bundle.json `generation`: the declared tiny-LLM contract, its names resolved to indices.
GenerationSection generation_section(const json& section, const Bundle& b,
                                      const std::string& source) {
  const std::string path = "generation";
  const int64_t version = int_field(section, "version", source, path);
  if (version != kGenerationSectionVersion) {
    bad(source, "generation.version",
        "this runner reads generation section version " +
            std::to_string(kGenerationSectionVersion) + ", the bundle has " +
            std::to_string(version) +
            "; update the runner or rebuild the bundle with a matching trt-edge");
  }
  GenerationSection g;
  g.contract = string_field(section, "contract", source, path);
  if (g.contract != "tiny_llm") {
    bad(source, "generation.contract",
        "'" + g.contract + "' is not a contract this runner knows (tiny_llm)");
  }
  g.tokens_input = name_field(section, "tokens", source, path);
  g.start_input = name_field(section, "start_position", source, path);
  g.logits_output = name_field(section, "logits", source, path);
  g.tokens_index = index_of(b.inputs, g.tokens_input);
  g.start_index = index_of(b.inputs, g.start_input);
  g.logits_index = index_of(b.outputs, g.logits_output);
  if (g.tokens_index == b.inputs.size()) {
    bad(source, "generation.tokens", "'" + g.tokens_input + "' is not an input " + names_of(b.inputs));
  }
  if (g.start_index == b.inputs.size()) {
    bad(source, "generation.start_position",
        "'" + g.start_input + "' is not an input " + names_of(b.inputs));
  }
  if (g.logits_index == b.outputs.size()) {
    bad(source, "generation.logits", "'" + g.logits_output + "' is not an output");
  }
  return g;
}

/// bundle.json `llm`: every field trt_edge_runner.bundle_format.LlmSection reads, with the
/// same checks, plus what this runner relies on: the method is io.method (the one loaded)
/// and the positions input is an integer tensor it can bounds-check.
LlmSection llm_section(const json& section, const Bundle& b, const std::string& source) {
  const std::string path = "llm";
  const int64_t version = int_field(section, "version", source, path);
  if (version != kLlmSectionVersion && version != kLlmSectionWindowVersion &&
      version != kLlmSectionSlotsVersion) {
    bad(source, "llm.version",
        "this runner reads llm section version " + std::to_string(kLlmSectionVersion) + ", " +
            std::to_string(kLlmSectionWindowVersion) + " or " +
            std::to_string(kLlmSectionSlotsVersion) + ", the bundle has " +
            std::to_string(version) +
            "; update the runner or rebuild the bundle with a matching trt-edge");
  }
  LlmSection llm;
  llm.version = version;
  const json& roles = field(section, "inputs", source, path);
  if (!roles.is_object()) bad(source, "llm.inputs", "expected an object");
  llm.tokens_input = string_field(roles, "tokens", source, "llm.inputs");
  llm.positions_input = string_field(roles, "positions", source, "llm.inputs");
  if (version == kLlmSectionWindowVersion) {
    // Version 2 (`attention: filled`): the window input and its bucket are required; a
    // version-1 section's `window` role, if any, is not read (as in Python).
    llm.window_input = string_field(roles, "window", source, "llm.inputs");
    llm.window_bucket = int_field(section, "window_bucket", source, path, 1);
    llm.window_index = role_input(b, *llm.window_input, "window", source);
  }
  if (version == kLlmSectionSlotsVersion) {
    // Version 3 (`runtime.slots`): the slot input and how many caches the program holds.
    llm.slot_input = string_field(roles, "slot", source, "llm.inputs");
    llm.slots = int_field(section, "slots", source, path, 2);
    llm.slot_index = role_input(b, *llm.slot_input, "slot", source);
  }
  llm.tokens_index = role_input(b, llm.tokens_input, "tokens", source);
  llm.positions_index = role_input(b, llm.positions_input, "positions", source);
  const std::string& positions_dtype = b.inputs[llm.positions_index].dtype;
  if (positions_dtype != "int64" && positions_dtype != "int32") {
    bad(source, "llm.inputs.positions",
        "'" + llm.positions_input + "' is " + positions_dtype +
            "; cache positions are int64 or int32");
  }
  llm.logits_output = string_field(section, "logits", source, path);
  llm.logits_index = index_of(b.outputs, llm.logits_output);
  if (llm.logits_index == b.outputs.size()) {
    bad(source, "llm.logits", "'" + llm.logits_output + "' is not an output");
  }
  const json& eos = field(section, "eos_token_ids", source, path);
  if (!eos.is_array()) {
    bad(source, "llm.eos_token_ids", "expected a list of integers, got " + eos.dump());
  }
  for (const auto& id : eos) {
    if (!id.is_number_integer()) {
      bad(source, "llm.eos_token_ids", "expected a list of integers, got " + eos.dump());
    }
    llm.eos_token_ids.push_back(id.get<int64_t>());
  }
  if (section.contains("tokenizer") && !section.at("tokenizer").is_null()) {
    const json& tokenizer = section.at("tokenizer");
    if (!tokenizer.is_string()) {
      bad(source, "llm.tokenizer", "expected a file name or null, got " + tokenizer.dump());
    }
    if (!b.files.count(tokenizer.get<std::string>())) {
      bad(source, "llm.tokenizer", "'" + tokenizer.get<std::string>() + "' is not listed in files");
    }
  }
  const json& buffers = field(section, "cache_buffers", source, path);
  if (!buffers.is_array() ||
      !std::all_of(buffers.begin(), buffers.end(), [](const json& x) { return x.is_string(); })) {
    bad(source, "llm.cache_buffers", "expected a list of names, got " + buffers.dump());
  }
  llm.max_cache_len = int_field(section, "max_cache_len", source, path);
  if (llm.max_cache_len < 1) {
    bad(source, "llm.max_cache_len", "must be >= 1, got " + std::to_string(llm.max_cache_len));
  }
  llm.vocab_size = int_field(section, "vocab_size", source, path);
  if (llm.vocab_size < 1) {
    bad(source, "llm.vocab_size", "must be >= 1, got " + std::to_string(llm.vocab_size));
  }
  const std::string method = string_field(section, "method", source, path);
  if (method != b.method) {
    bad(source, "llm.method",
        "'" + method + "' is not io.method '" + b.method + "' (the method this runner loads)");
  }
  for (const char* key : {"bos_token_id", "pad_token_id"}) {
    const bool given = section.contains(key) && !section.at(key).is_null();
    if (given && !section.at(key).is_number_integer()) {
      bad(source, path + "." + key, "expected an integer or null, got " + section.at(key).dump());
    }
  }
  if (section.contains("chat_template") && !section.at("chat_template").is_null() &&
      !section.at("chat_template").is_string()) {
    bad(source, "llm.chat_template",
        "expected a template string or null, got " + section.at("chat_template").dump());
  }
  if (section.contains("special_tokens")) {
    const json& special = object_field(section, "special_tokens", source, path);
    for (const auto& [role, token] : special.items()) {
      if (!token.is_string()) {
        bad(source, "llm.special_tokens." + role, "expected a string, got " + token.dump());
      }
    }
  }
  if (version != kLlmSectionWindowVersion && section.contains("window_bucket")) {
    int_field(section, "window_bucket", source, path, 1);  // the schema's type, unread
  }
  require_bool(section, "adds_bos", source, path);
  require_bool(section, "prepend_bos", source, path);
  require_bool(section, "requires_zeroed_planned_memory", source, path);
  string_field(section, "architecture", source, path);
  return llm;
}

}  // namespace

int64_t LlmSection::window_length(int64_t end) const {
  const int64_t bucket = std::max<int64_t>(window_bucket, 1);
  const int64_t rounded = end <= 0 ? 0 : (end + bucket - 1) / bucket * bucket;
  return std::max<int64_t>(1, std::min(max_cache_len, rounded));
}

Bundle read_bundle(const std::string& dir) {
  const std::string source = (fs::path(dir) / "bundle.json").string();
  return parse_bundle(read_document(dir, "bundle.json"), source, dir);
}

Bundle parse_bundle(const std::string& text, const std::string& source, const std::string& dir) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw RunnerError(ErrorKind::kBundleFormat, source + ": not valid JSON: " + e.what())
        .with_file(source);
  }
  try {
    if (!doc.is_object()) bad(source, "(document)", "expected a JSON object");
    Bundle b;
    b.dir = dir;
    const int64_t version = int_field(doc, "schema_version", source, "");
    if (version != 1) {
      bad(source, "schema_version",
          "this runner reads schema version 1, the bundle has " + std::to_string(version));
    }
    const json& model = object_field(doc, "model", source, "");
    b.name = name_field(model, "name", source, "model");
    b.version = name_field(model, "version", source, "model");
    // target: optional fields (null or absent means "any", as the agent's fingerprint rule).
    if (doc.contains("target") && doc.at("target").is_object()) {
      const json& target = doc.at("target");
      if (target.contains("arch") && !target.at("arch").is_null()) {
        if (!target.at("arch").is_string()) bad(source, "target.arch", "expected a string");
        b.target_arch = target.at("arch").get<std::string>();
      }
      if (target.contains("id") && target.at("id").is_string()) {
        b.target_id = target.at("id").get<std::string>();
      }
    }
    const json& io = object_field(doc, "io", source, "");
    b.method = string_field(io, "method", source, "io");
    const json& inputs = list_field(io, "inputs", source, "io");
    for (size_t i = 0; i < inputs.size(); ++i) {
      b.inputs.push_back(tensor(inputs[i], source, "io.inputs[" + std::to_string(i) + "]"));
    }
    const json& outputs = list_field(io, "outputs", source, "io");
    for (size_t i = 0; i < outputs.size(); ++i) {
      b.outputs.push_back(tensor(outputs[i], source, "io.outputs[" + std::to_string(i) + "]"));
    }
    const json& profiles = list_field(doc, "profiles", source, "");
    for (size_t i = 0; i < profiles.size(); ++i) {
      const json& p = profiles[i];
      const std::string path = "profiles[" + std::to_string(i) + "]";
      if (!p.is_object()) bad(source, path, "expected an object, got " + p.dump());
      Profile profile;
      profile.name = string_field(p, "name", source, path);
      if (p.contains("index")) int_field(p, "index", source, path, 0);
      for (const auto& [sym, r] : object_field(p, "dims", source, path).items()) {
        const std::string dpath = path + ".dims." + sym;
        if (!r.is_object()) bad(source, dpath, "expected {min, opt, max}, got " + r.dump());
        profile.dims[sym] = DimRange{int_field(r, "min", source, dpath, 0),
                                     int_field(r, "opt", source, dpath, 0),
                                     int_field(r, "max", source, dpath, 0)};
      }
      for (const auto& spec : b.inputs) {
        for (const auto& d : spec.shape) {
          if (std::holds_alternative<std::string>(d) &&
              !profile.dims.count(std::get<std::string>(d))) {
            bad(source, path + ".dims",
                "symbol '" + std::get<std::string>(d) + "' of input '" + spec.name + "' missing");
          }
        }
      }
      b.profiles.push_back(std::move(profile));
    }
    const json& runtime = object_field(doc, "runtime", source, "");
    const std::string policy = string_field(runtime, "policy", source, "runtime");
    if (policy != "pinned" && policy != "auto") {
      bad(source, "runtime.policy", "'" + policy + "' is neither 'pinned' nor 'auto'");
    }
    for (const auto& [phase, target] : object_field(runtime, "phases", source, "runtime").items()) {
      const std::string ppath = "runtime.phases." + phase;
      if (target.is_string() && target.get<std::string>() == "auto") {
        b.phases[phase] = std::nullopt;
      } else if (target.is_number_integer()) {
        b.phases[phase] = checked_int(target, source, ppath, 0);
      } else {
        bad(source, ppath, "expected a profile index (>= 0) or 'auto', got " + target.dump());
      }
    }
    for (const auto& [name, entry] : object_field(doc, "files", source, "").items()) {
      const std::string fpath = "files." + name;
      if (!entry.is_object()) bad(source, fpath, "expected {sha256, size}, got " + entry.dump());
      const std::string sha256 = string_field(entry, "sha256", source, fpath);
      const bool hex = sha256.size() == 64 &&
                       std::all_of(sha256.begin(), sha256.end(), [](char c) {
                         return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                       });
      if (!hex) bad(source, fpath + ".sha256", "expected 64 lowercase hex digits, got '" + sha256 + "'");
      b.files[name] = FileEntry{sha256, int_field(entry, "size", source, fpath, 0)};
    }
    if (doc.contains("delegates")) {
      const json& delegates = list_field(doc, "delegates", source, "");
      for (size_t i = 0; i < delegates.size(); ++i) {
        const json& d = delegates[i];
        const std::string dpath = "delegates[" + std::to_string(i) + "]";
        if (!d.is_object()) bad(source, dpath, "expected an object, got " + d.dump());
        b.delegate_backends.push_back(string_field(d, "backend_id", source, dpath));
        string_field(d, "method", source, dpath);
        int_field(d, "index", source, dpath, 0);
        int_field(d, "blob_size", source, dpath, 0);
        if (d.contains("engine") && !d.at("engine").is_null()) {
          const json& engine = object_field(d, "engine", source, dpath);
          const std::string epath = dpath + ".engine";
          if (string_field(engine, "flavour", source, epath) == "tensorrt_rtx" &&
              b.rtx_engine_version.empty()) {
            b.rtx_engine_version = string_field(engine, "version", source, epath);
            for (const json& sm : list_field(engine, "compute_capabilities", source, epath)) {
              if (!b.rtx_compute_capabilities.empty()) b.rtx_compute_capabilities += ", ";
              b.rtx_compute_capabilities += sm.is_string() ? sm.get<std::string>() : sm.dump();
            }
          }
        }
        if (d.contains("profile_signature") && !d.at("profile_signature").is_null() &&
            !d.at("profile_signature").is_object()) {
          bad(source, dpath + ".profile_signature",
              "expected an object or null, got " + d.at("profile_signature").dump());
        }
      }
    }
    // memory: read only to hold it to the schema (the agent's fleet gate uses it).
    if (doc.contains("memory") && !doc.at("memory").is_null()) {
      const json& memory = object_field(doc, "memory", source, "");
      for (const char* key :
           {"weights_bytes", "planned_bytes", "kv_cache_bytes", "runner_bytes", "total_bytes"}) {
        int_field(memory, key, source, "memory", 0);
      }
    }
    if (doc.contains("llm") && !doc.at("llm").is_null()) {
      if (!doc.at("llm").is_object()) bad(source, "llm", "expected an object");
      b.llm = llm_section(doc.at("llm"), b, source);
    }
    if (doc.contains("generation") && !doc.at("generation").is_null()) {
      if (!doc.at("generation").is_object()) bad(source, "generation", "expected an object");
      b.generation = generation_section(doc.at("generation"), b, source);
    }
    // Other top-level sections are for other readers (or newer writers): not refused here.
    return b;
  } catch (const json::exception& e) {
    throw RunnerError(ErrorKind::kBundleFormat, source + ": unexpected value: " + e.what())
        .with_file(source);
  }
}

std::vector<int64_t> Bundle::shape_of(const TensorSpec& spec,
                                      const std::map<std::string, int64_t>& symbols) const {
  std::vector<int64_t> shape;
  for (const auto& d : spec.shape) {
    if (std::holds_alternative<int64_t>(d)) {
      shape.push_back(std::get<int64_t>(d));
      continue;
    }
    const auto& sym = std::get<std::string>(d);
    auto it = symbols.find(sym);
    if (it == symbols.end()) {
      throw RunnerError(ErrorKind::kRequestRefused, "input '" + spec.name +
                                                        "' needs a value for symbol '" + sym +
                                                        "': pass --dims " + sym + "=N")
          .with_input(spec.name);
    }
    shape.push_back(it->second);
  }
  return shape;
}

ProfileTable Bundle::profile_table() const {
  ProfileTable table;
  for (const auto& profile : profiles) {
    std::vector<ProfileBounds> row;
    for (const auto& spec : inputs) {
      ProfileBounds b;
      for (const auto& d : spec.shape) {
        if (std::holds_alternative<int64_t>(d)) {
          b.min.push_back(std::get<int64_t>(d));
          b.max.push_back(std::get<int64_t>(d));
        } else {
          const DimRange& r = profile.dims.at(std::get<std::string>(d));
          b.min.push_back(r.min);
          b.max.push_back(r.max);
        }
      }
      row.push_back(b);
    }
    table.bounds.push_back(std::move(row));
  }
  return table;
}

void verify_files(const Bundle& bundle) {
  refuse(bundle.dir, find_problems(bundle.dir, bundle.files, true));
}

const char* compiled_arch() noexcept {
#if defined(__aarch64__)
  return "aarch64";
#elif defined(__x86_64__)
  return "x86_64";
#elif defined(__arm__)
  return "armv7l";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

void check_target(const Bundle& bundle) {
  if (bundle.target_arch.empty() || bundle.target_arch == compiled_arch()) return;
  const std::string source = (fs::path(bundle.dir) / "bundle.json").string();
  const std::string target =
      bundle.target_id.empty() ? "" : " (target " + bundle.target_id + ")";
  throw RunnerError(ErrorKind::kTargetMismatch,
                    source + ": built for " + bundle.target_arch + target +
                        ", but this trt-edge-run runs " + compiled_arch() +
                        " code: install the bundle's " + compiled_arch() +
                        " build (the manifest's build.targets needs a " + compiled_arch() +
                        " target such as cpu-" + compiled_arch() + "), or run it with the " +
                        bundle.target_arch + " trt-edge-run")
      .with_file(source);
}

}  // namespace trt_edge::runner
