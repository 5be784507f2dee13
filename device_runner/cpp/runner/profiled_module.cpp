#include "profiled_module.h"

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <variant>

#include "cache_bounds.h"
#include "dtypes.h"
#include "fused_attention.h"

namespace trt_edge::runner {
namespace {

using executorch::aten::ScalarType;
using executorch::extension::TensorPtr;

ScalarType scalar_type(const std::string& dtype) {
  const DtypeInfo* info = find_dtype(dtype);
  if (info == nullptr) {
    throw RunnerError(ErrorKind::kRequestRefused, "dtype " + dtype + " is not supported by trt-edge-run");
  }
  return static_cast<ScalarType>(info->scalar_type);
}

std::string dtype_name(ScalarType t) {
  const DtypeInfo* info = find_dtype(static_cast<int8_t>(t));
  return info == nullptr ? "unsupported" : info->name;
}

std::vector<std::string> input_names(const Bundle& bundle) {
  std::vector<std::string> names;
  for (const auto& spec : bundle.inputs) names.push_back(spec.name);
  return names;
}

template <typename E>
std::string hex(E error) {
  char text[16];
  std::snprintf(text, sizeof text, "%x", static_cast<unsigned>(error));
  return text;
}

Dims dims_of(const Array& a) {
  Dims d;
  for (int64_t e : a.shape) {
    d.push_back(e);
  }
  return d;
}

/// Inputs whose bundle.json shapes share a symbol (a slots program's `batch` in input_ids,
/// cache_position and cache_slot) must agree on it: each dim alone may be inside a profile
/// while the call is not, and the method then fails inside a kernel with an opaque error
/// (0x12). Mirrors trt_edge_runner.runner.Runner._check_symbols (the same message).
void check_symbols(const std::vector<TensorSpec>& specs, const std::vector<Array>& inputs) {
  std::map<std::string, std::pair<int64_t, size_t>> seen;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& shape = specs[i].shape;
    for (size_t d = 0; d < shape.size() && d < inputs[i].shape.size(); ++d) {
      if (!std::holds_alternative<std::string>(shape[d])) continue;
      const std::string& sym = std::get<std::string>(shape[d]);
      const int64_t value = inputs[i].shape[d];
      const auto [first, inserted] = seen.emplace(sym, std::make_pair(value, i));
      if (inserted || first->second.first == value) continue;
      throw RunnerError(ErrorKind::kRequestRefused,
                        "symbol '" + sym + "' is " + std::to_string(first->second.first) +
                            " in input '" + specs[first->second.second].name + "' but " +
                            std::to_string(value) + " in input '" + specs[i].name + "' (dim " +
                            std::to_string(d) + "); inputs sharing a symbol must agree")
          .with_input(specs[i].name);
    }
  }
}

}  // namespace

ProfiledModule::ProfiledModule(Bundle bundle, bool honour_policy)
    : bundle_(std::move(bundle)),
      decision_(decide_mode(bundle_.delegate_backends, static_cast<int64_t>(bundle_.profiles.size()),
                            native_actuator_available(), honour_policy)),
      emulation_(bundle_.profile_table(), input_names(bundle_)),
      actuator_(decision_.mode == Mode::kNative ? make_native_actuator() : make_plain_actuator()) {
  const std::string pte = bundle_.dir + "/model.pte";
  if (!bundle_.rtx_engine_version.empty()) {
    // The same sentence as trt_edge_runner.bundle_format.rtx_refusal.
    throw RunnerError(
        ErrorKind::kProgramLoad,
        pte + ": holds TensorRT-RTX " + bundle_.rtx_engine_version +
            " engines (compute capability " +
            (bundle_.rtx_compute_capabilities.empty() ? std::string("the default set")
                                                      : bundle_.rtx_compute_capabilities) +
            "); no ExecuTorch runtime backend runs TensorRT-RTX engines: upstream's "
            "TensorRTBackend (pytorch/TensorRT's ExecuTorch delegate) links regular TensorRT's "
            "libnvinfer, and TensorRT-RTX's C++ SDK is not packaged where trt-edge-run is "
            "built. Build for a CPU target (--backend xnnpack) or a regular TensorRT target "
            "(jetson-*, x86-ampere/ada/hopper/blackwell) to run it on a device")
        .with_file(pte);
  }
  try {
    load_program(pte);
  } catch (const std::bad_alloc&) {
    // A damaged program can declare planned buffers no machine has: a refusal, not a bug.
    throw RunnerError(ErrorKind::kProgramLoad,
                      pte + ": loading it needs more memory than can be allocated (its planned "
                            "buffers are larger than this machine gives); rebuild the bundle")
        .with_file(pte);
  } catch (const std::length_error&) {
    throw RunnerError(ErrorKind::kProgramLoad,
                      pte + ": loading it asks for a buffer larger than can exist; rebuild the bundle")
        .with_file(pte);
  }
  check_method_inputs(pte);
  if (decision_.notice != Notice::kNone) {
    std::cerr << "trt-edge-run: warning: " << bundle_.dir << ": "
              << notice_message(decision_.notice, static_cast<int64_t>(bundle_.profiles.size()))
              << "\n";
  }
}

void ProfiledModule::load_program(const std::string& pte) {
  register_fused_attention_kernel();  // `attention: fused` bundles call llama::custom_sdpa.out
  const std::string ptd = bundle_.dir + "/model.ptd";
  module_ = bundle_.files.count("model.ptd")
                ? std::make_unique<executorch::extension::Module>(pte, ptd)
                : std::make_unique<executorch::extension::Module>(pte);
  // Full verification: every offset and index inside the FlatBuffer is checked before
  // anything is read through it (Minimal, ExecuTorch's default, only checks the header).
  // ExecuTorch does not harden its loader against every malformed program, so a parent
  // process must still treat a runner killed by a signal as a failed run.
  const auto loaded = module_->load(executorch::runtime::Program::Verification::InternalConsistency);
  if (loaded != executorch::runtime::Error::Ok) {
    throw RunnerError(ErrorKind::kProgramLoad,
                      pte + ": not a loadable ExecuTorch program (ExecuTorch error 0x" +
                          hex(loaded) + "); rebuild the bundle")
        .with_file(pte);
  }
  const auto err = module_->load_method(bundle_.method);
  if (err == executorch::runtime::Error::OperatorMissing) {
    // A program from a newer SDK than this runner: e.g. `attention: fused` calls
    // llama::custom_sdpa.out, which runners before its kernel do not carry. ExecuTorch's log
    // line ("Missing operator: ...") names the operator.
    throw RunnerError(ErrorKind::kProgramLoad,
                      pte + ": method '" + bundle_.method +
                          "' calls an operator this trt-edge-run has no kernel for (ExecuTorch's "
                          "'Missing operator' log line names it); the bundle was built for a "
                          "newer runner: install the trt-edge-run of the SDK that built it, or "
                          "rebuild the bundle with this runner's SDK")
        .with_file(pte);
  }
  if (err != executorch::runtime::Error::Ok) {
    throw RunnerError(ErrorKind::kProgramLoad,
                      pte + ": loading method '" + bundle_.method + "' failed (ExecuTorch error 0x" +
                          hex(err) + "); is the backend it needs linked into this runner?")
        .with_file(pte);
  }
}

void ProfiledModule::check_method_inputs(const std::string& pte) {
  const auto meta = module_->method_meta(bundle_.method);
  if (!meta.ok()) {
    throw RunnerError(ErrorKind::kProgramLoad, pte + ": method '" + bundle_.method +
                                                   "' has no readable metadata (ExecuTorch error 0x" +
                                                   hex(meta.error()) + ")")
        .with_file(pte);
  }
  auto disagree = [&](const std::string& what) {
    return RunnerError(ErrorKind::kProgramLoad,
                       bundle_.dir + "/bundle.json and " + pte + " disagree: " + what +
                           "; the bundle was assembled from different builds: rebuild it")
        .with_file(pte);
  };
  if (meta->num_inputs() != bundle_.inputs.size()) {
    throw disagree("bundle.json lists " + std::to_string(bundle_.inputs.size()) +
                   " input(s), method '" + bundle_.method + "' takes " +
                   std::to_string(meta->num_inputs()));
  }
  for (size_t i = 0; i < bundle_.inputs.size(); ++i) {
    const TensorSpec& spec = bundle_.inputs[i];
    const auto tag = meta->input_tag(i);
    if (!tag.ok() || *tag != executorch::runtime::Tag::Tensor) {
      throw disagree("input '" + spec.name + "' is a tensor in bundle.json, not in the method");
    }
    const auto info = meta->input_tensor_meta(i);
    if (!info.ok()) throw disagree("input '" + spec.name + "' has no readable tensor metadata");
    if (dtype_name(info->scalar_type()) != spec.dtype) {
      throw disagree("input '" + spec.name + "' is " + spec.dtype + " in bundle.json, " +
                     dtype_name(info->scalar_type()) + " in the method");
    }
    if (info->sizes().size() != spec.shape.size()) {
      throw disagree("input '" + spec.name + "' has rank " + std::to_string(spec.shape.size()) +
                     " in bundle.json, " + std::to_string(info->sizes().size()) +
                     " in the method");
    }
  }
}

Request ProfiledModule::request_for_phase(const std::string& phase) const {
  auto it = bundle_.phases.find(phase);
  if (it == bundle_.phases.end()) {
    std::string names;
    for (const auto& [name, target] : bundle_.phases) {
      names += (names.empty() ? "'" : ", '") + name + "'";
    }
    throw RunnerError(ErrorKind::kRequestRefused, "unknown phase '" + phase +
                                                      "': the bundle's runtime policy defines " +
                                                      (names.empty() ? "no phases" : names))
        .with_phase(phase);
  }
  if (!it->second.has_value()) {
    return Request::automatic();
  }
  if (*it->second < 0) {
    throw RunnerError(ErrorKind::kRequestRefused,
                      "phase '" + phase + "' pins a negative profile; rebuild the bundle")
        .with_phase(phase);
  }
  return Request::pinned(*it->second);
}

std::vector<executorch::runtime::EValue> ProfiledModule::wrap(const std::vector<Array>& inputs,
                                                              std::vector<TensorPtr>& keep) {
  std::vector<executorch::runtime::EValue> values;
  values.reserve(inputs.size());
  keep.reserve(inputs.size());
  for (const auto& a : inputs) {
    std::vector<executorch::aten::SizesType> sizes(a.shape.begin(), a.shape.end());
    keep.push_back(executorch::extension::from_blob(const_cast<uint8_t*>(a.data.data()),
                                                    std::move(sizes), scalar_type(a.dtype)));
    values.emplace_back(keep.back());
  }
  return values;
}

void ProfiledModule::execute_raw(const std::vector<Array>& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<TensorPtr> keep;
  auto values = wrap(inputs, keep);
  auto result = module_->execute(bundle_.method, values);
  if (!result.ok()) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      bundle_.dir + "/model.pte: method '" + bundle_.method +
                          "' failed without the runner's policy (ExecuTorch error 0x" +
                          hex(result.error()) + ")");
  }
}

RunResult ProfiledModule::execute(const std::vector<Array>& inputs) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  if (inputs.size() != bundle_.inputs.size()) {
    throw RunnerError(ErrorKind::kRequestRefused,
                      std::to_string(inputs.size()) + " input(s) passed, the bundle's method takes " +
                          std::to_string(bundle_.inputs.size()));
  }
  std::vector<Dims> dims;
  dims.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != bundle_.inputs[i].dtype) {
      throw RunnerError(ErrorKind::kRequestRefused, "input '" + bundle_.inputs[i].name +
                                                        "' has dtype " + inputs[i].dtype +
                                                        ", the bundle expects " +
                                                        bundle_.inputs[i].dtype)
          .with_input(bundle_.inputs[i].name);
    }
    dims.push_back(dims_of(inputs[i]));
  }
  check_symbols(bundle_.inputs, inputs);
  if (bundle_.llm) {
    const LlmSection& llm = *bundle_.llm;
    check_cache_positions(llm, inputs[llm.positions_index]);
    if (llm.window_input) {
      check_cache_window(llm, inputs[llm.positions_index], inputs[llm.window_index]);
    }
    if (llm.slot_input) check_cache_slots(llm, inputs[llm.slot_index]);
  }
  const Request request = decision_.profile0_only ? Request::default_request() : current_request();

  std::lock_guard<std::mutex> lock(mutex_);
  const Selection selection = emulation_.resolve(request, dims);
  const int64_t profile = *selection.profile;

  std::vector<TensorPtr> keep;
  auto values = wrap(inputs, keep);
  const auto before_execute = clock::now();
  auto result = actuator_->execute(*module_, bundle_.method, values, request, profile);
  const auto after_execute = clock::now();
  if (!result.ok()) {
    throw RunnerError(ErrorKind::kExecutionFailed,
                      bundle_.dir + "/model.pte: method '" + bundle_.method + "' failed on profile " +
                          std::to_string(profile) + " (ExecuTorch error 0x" + hex(result.error()) +
                          ")")
        .with_file(bundle_.dir + "/model.pte");
  }
  RunResult out;
  out.profile = profile;
  out.outcome = selection.outcome;
  for (const auto& value : *result) {
    if (!value.isTensor()) {
      continue;
    }
    const auto& tensor = value.toTensor();
    Array array;
    array.dtype = dtype_name(tensor.scalar_type());
    for (auto s : tensor.sizes()) {
      array.shape.push_back(s);
    }
    array.data.resize(tensor.nbytes());
    std::memcpy(array.data.data(), tensor.const_data_ptr(), tensor.nbytes());
    out.outputs.push_back(std::move(array));
  }
  last_overhead_us_ = std::chrono::duration<double, std::micro>(before_execute - started).count();
  last_copy_us_ = std::chrono::duration<double, std::micro>(clock::now() - after_execute).count();
  return out;
}

}  // namespace trt_edge::runner
