// bundle.json → Bundle.
#include "bundle.h"

#include <filesystem>
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

TensorSpec tensor(const json& t, const std::string& source, const std::string& path) {
  TensorSpec spec;
  spec.name = field(t, "name", source, path).get<std::string>();
  spec.dtype = field(t, "dtype", source, path).get<std::string>();
  for (const auto& d : field(t, "shape", source, path)) {
    if (d.is_number_integer()) {
      spec.shape.emplace_back(d.get<int64_t>());
    } else if (d.is_string()) {
      spec.shape.emplace_back(d.get<std::string>());
    } else {
      bad(source, path + ".shape", "expected ints and symbol names");
    }
  }
  if (t.contains("values") && t.at("values").is_array() && t.at("values").size() == 2) {
    spec.values = std::make_pair(t.at("values")[0].get<int64_t>(), t.at("values")[1].get<int64_t>());
  }
  return spec;
}

}  // namespace

Bundle read_bundle(const std::string& dir) {
  const std::string source = (fs::path(dir) / "bundle.json").string();
  const std::string text = read_document(dir, "bundle.json");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw RunnerError(ErrorKind::kBundleFormat, source + ": not valid JSON: " + e.what())
        .with_file(source);
  }
  try {
    Bundle b;
    b.dir = dir;
    const int64_t version = field(doc, "schema_version", source, "").get<int64_t>();
    if (version != 1) {
      bad(source, "schema_version",
          "this runner reads schema version 1, the bundle has " + std::to_string(version));
    }
    const json& model = field(doc, "model", source, "");
    b.name = field(model, "name", source, "model").get<std::string>();
    b.version = field(model, "version", source, "model").get<std::string>();
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
    const json& io = field(doc, "io", source, "");
    b.method = field(io, "method", source, "io").get<std::string>();
    size_t i = 0;
    for (const auto& t : field(io, "inputs", source, "io")) {
      b.inputs.push_back(tensor(t, source, "io.inputs[" + std::to_string(i++) + "]"));
    }
    i = 0;
    for (const auto& t : field(io, "outputs", source, "io")) {
      b.outputs.push_back(tensor(t, source, "io.outputs[" + std::to_string(i++) + "]"));
    }
    i = 0;
    for (const auto& p : field(doc, "profiles", source, "")) {
      const std::string path = "profiles[" + std::to_string(i++) + "]";
      Profile profile;
      profile.name = field(p, "name", source, path).get<std::string>();
      for (const auto& [sym, r] : field(p, "dims", source, path).items()) {
        const std::string dpath = path + ".dims." + sym;
        profile.dims[sym] = DimRange{field(r, "min", source, dpath).get<int64_t>(),
                                     field(r, "opt", source, dpath).get<int64_t>(),
                                     field(r, "max", source, dpath).get<int64_t>()};
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
    const json& runtime = field(doc, "runtime", source, "");
    for (const auto& [phase, target] : field(runtime, "phases", source, "runtime").items()) {
      if (target.is_string() && target.get<std::string>() == "auto") {
        b.phases[phase] = std::nullopt;
      } else if (target.is_number_integer()) {
        b.phases[phase] = target.get<int64_t>();
      } else {
        bad(source, "runtime.phases." + phase, "expected an index or 'auto'");
      }
    }
    for (const auto& [name, entry] : field(doc, "files", source, "").items()) {
      b.files[name] = FileEntry{field(entry, "sha256", source, "files." + name).get<std::string>(),
                                field(entry, "size", source, "files." + name).get<int64_t>()};
    }
    if (doc.contains("delegates")) {
      for (const auto& d : doc.at("delegates")) {
        b.delegate_backends.push_back(field(d, "backend_id", source, "delegates").get<std::string>());
      }
    }
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
