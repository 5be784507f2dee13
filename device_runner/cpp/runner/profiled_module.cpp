#include "profiled_module.h"

#include <chrono>
#include <cstring>
#include <iostream>

#ifdef TRT_EDGE_TORCHTRT_PROFILE_GUARD
// Torch-TensorRT's ExecuTorch backend with multi-profile support (an open upstream
// pull request, in no release yet): its guard records the request for the
// TensorRT delegates. Cannot be built on machines without TensorRT.
#include <torch_tensorrt/executorch/TensorRTBackend.h>
#endif

namespace trt_edge::runner {
namespace {

using executorch::aten::ScalarType;
using executorch::extension::TensorPtr;

ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "float32") return ScalarType::Float;
  if (dtype == "float64") return ScalarType::Double;
  if (dtype == "float16") return ScalarType::Half;
  if (dtype == "int64") return ScalarType::Long;
  if (dtype == "int32") return ScalarType::Int;
  if (dtype == "int16") return ScalarType::Short;
  if (dtype == "int8") return ScalarType::Char;
  if (dtype == "uint8") return ScalarType::Byte;
  if (dtype == "bool") return ScalarType::Bool;
  throw RunnerError("dtype " + dtype + " is not supported by trt-edge-run", 2);
}

std::string dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Half: return "float16";
    case ScalarType::Long: return "int64";
    case ScalarType::Int: return "int32";
    case ScalarType::Short: return "int16";
    case ScalarType::Char: return "int8";
    case ScalarType::Byte: return "uint8";
    case ScalarType::Bool: return "bool";
    default: return "unsupported";
  }
}

Dims dims_of(const Array& a) {
  Dims d;
  for (int64_t e : a.shape) {
    d.push_back(e);
  }
  return d;
}

}  // namespace

ProfiledModule::ProfiledModule(Bundle bundle, bool honour_policy)
    : bundle_(std::move(bundle)), table_(bundle_.profile_table()), honour_policy_(honour_policy) {
  for (const auto& spec : bundle_.inputs) {
    input_names_.push_back(spec.name);
  }
  const std::string pte = bundle_.dir + "/model.pte";
  module_ = std::make_unique<executorch::extension::Module>(pte);
  const auto err = module_->load_method(bundle_.method);
  if (err != executorch::runtime::Error::Ok) {
    throw RunnerError(pte + ": loading method '" + bundle_.method + "' failed (ExecuTorch error 0x" +
                          [&] {
                            char hex[16];
                            std::snprintf(hex, sizeof hex, "%x", static_cast<unsigned>(err));
                            return std::string(hex);
                          }() +
                          "); is the backend it needs linked into this runner?",
                      1);
  }
  if (!honour_policy_ && table_.size() > 1) {
    std::cerr << "trt-edge-run: warning: " << bundle_.dir
              << ": policy ignored on request: running profile 0 only\n";
  }
}

const char* ProfiledModule::mode() noexcept {
#ifdef TRT_EDGE_TORCHTRT_PROFILE_GUARD
  return "native";
#else
  return "emulated";
#endif
}

Request ProfiledModule::request_for_phase(const std::string& phase) const {
  auto it = bundle_.phases.find(phase);
  if (it == bundle_.phases.end()) {
    std::string names;
    for (const auto& [name, target] : bundle_.phases) {
      names += (names.empty() ? "'" : ", '") + name + "'";
    }
    throw RunnerError("unknown phase '" + phase + "': the bundle's runtime policy defines " +
                          (names.empty() ? "no phases" : names),
                      2);
  }
  if (!it->second.has_value()) {
    return Request::automatic();
  }
  if (*it->second < 0) {
    throw RunnerError("phase '" + phase + "' pins a negative profile; rebuild the bundle", 2);
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
    throw RunnerError("raw execute failed", 1);
  }
}

RunResult ProfiledModule::execute(const std::vector<Array>& inputs) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  if (inputs.size() != bundle_.inputs.size()) {
    throw RunnerError(std::to_string(inputs.size()) + " input(s) passed, the bundle's method takes " +
                          std::to_string(bundle_.inputs.size()),
                      2);
  }
  std::vector<Dims> dims;
  dims.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != bundle_.inputs[i].dtype) {
      throw RunnerError("input '" + input_names_[i] + "' has dtype " + inputs[i].dtype +
                            ", the bundle expects " + bundle_.inputs[i].dtype,
                        2);
    }
    dims.push_back(dims_of(inputs[i]));
  }
  const Request request = honour_policy_ ? current_request() : Request::default_request();

  std::lock_guard<std::mutex> lock(mutex_);
  const Selection selection = select_profile(table_, request, dims);
  switch (selection.outcome) {
    case Outcome::kNoProfileMatchesInputs:
      throw RunnerError(describe_no_match(table_, dims, input_names_), 2);
    case Outcome::kRequestedProfileUnavailable:
      throw RunnerError("the request pins profile " + std::to_string(request.index) +
                            ", but the bundle has " + std::to_string(table_.size()) +
                            " profile(s) (valid: 0.." + std::to_string(table_.size() - 1) + ")",
                        2);
    case Outcome::kPinIgnoredSingleProfile:
      if (!pin_warned_) {
        pin_warned_ = true;
        std::cerr << "trt-edge-run: warning: single-profile bundle: ignoring the pin to profile "
                  << request.index << " and running profile 0 (logged once)\n";
      }
      break;
    case Outcome::kOk:
      break;
  }
  const int64_t profile = *selection.profile;
  if (const InputViolation v = check_inputs(table_, profile, dims)) {
    throw RunnerError(describe(v, profile, input_names_), 2);
  }
  table_.active = profile;

  std::vector<TensorPtr> keep;
  auto values = wrap(inputs, keep);
  const auto before_execute = clock::now();
#ifdef TRT_EDGE_TORCHTRT_PROFILE_GUARD
  namespace tt = torch_tensorrt::executorch;
  auto native_execute = [&]() {
    if (request.kind == RequestKind::kAuto) {
      auto guard = tt::OptimizationProfileGuard::automatic();
      return module_->execute(bundle_.method, values);
    }
    if (request.kind == RequestKind::kPinned) {
      tt::OptimizationProfileGuard guard(static_cast<int32_t>(profile));
      return module_->execute(bundle_.method, values);
    }
    return module_->execute(bundle_.method, values);
  };
  auto result = native_execute();
#else
  auto result = module_->execute(bundle_.method, values);
#endif
  const auto after_execute = clock::now();
  if (!result.ok()) {
    throw RunnerError(bundle_.dir + "/model.pte: method '" + bundle_.method + "' failed on profile " +
                          std::to_string(profile) + " (ExecuTorch error 0x" +
                          [&] {
                            char hex[16];
                            std::snprintf(hex, sizeof hex, "%x",
                                          static_cast<unsigned>(result.error()));
                            return std::string(hex);
                          }() +
                          ")",
                      1);
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
