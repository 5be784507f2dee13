#include "input_values.h"

#include <filesystem>
#include <optional>

#include "documents.h"
#include "random_inputs.h"

namespace trt_edge::runner::cli {

std::vector<Array> read_inputs(const std::string& dir, const Bundle& bundle) {
  std::vector<Array> inputs;
  for (const auto& spec : bundle.inputs) {
    const std::string path = dir + "/" + spec.name + ".npy";
    if (!std::filesystem::exists(path)) {
      throw RunnerError(ErrorKind::kRequestRefused,
                        path + ": missing; --inputs DIR needs one <input name>.npy per input")
          .with_file(path)
          .with_input(spec.name);
    }
    try {
      inputs.push_back(read_npy(path));
    } catch (const std::runtime_error& e) {
      throw RunnerError(ErrorKind::kRequestRefused, e.what()).with_file(path).with_input(spec.name);
    }
  }
  return inputs;
}

void check_values(const Bundle& bundle, const std::vector<Array>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < bundle.inputs.size(); ++i) {
    const TensorSpec& spec = bundle.inputs[i];
    const Array& a = inputs[i];
    if (!spec.values || a.dtype != spec.dtype) continue;
    const auto [low, high] = *spec.values;
    auto at = [&](int64_t k) -> std::optional<int64_t> {
      if (a.dtype == "int64") return reinterpret_cast<const int64_t*>(a.data.data())[k];
      if (a.dtype == "int32") return reinterpret_cast<const int32_t*>(a.data.data())[k];
      if (a.dtype == "int16") return reinterpret_cast<const int16_t*>(a.data.data())[k];
      if (a.dtype == "int8") return reinterpret_cast<const int8_t*>(a.data.data())[k];
      if (a.dtype == "uint8") return a.data[static_cast<size_t>(k)];
      return std::nullopt;
    };
    for (int64_t k = 0; k < a.numel(); ++k) {
      const auto value = at(k);
      if (!value) break;
      if (*value >= low && *value < high) continue;
      std::vector<int64_t> index(a.shape.size(), 0);
      int64_t rest = k;
      for (size_t d = a.shape.size(); d-- > 0;) {
        index[d] = a.shape[d] ? rest % a.shape[d] : 0;
        rest = a.shape[d] ? rest / a.shape[d] : 0;
      }
      throw RunnerError(ErrorKind::kRequestRefused,
                        "input '" + spec.name + "'" + shape_text(index) + " = " +
                            std::to_string(*value) + " is outside its declared values [" +
                            std::to_string(low) + ", " + std::to_string(high) +
                            "); pass values in range (bundle io.inputs values)")
          .with_input(spec.name);
    }
  }
}

std::map<std::string, int64_t> symbols_for(const Options& o, const Bundle& bundle,
                                           const Request& request) {
  const int64_t index = request.kind == RequestKind::kPinned ? request.index : 0;
  std::map<std::string, int64_t> symbols = opt_symbols(bundle, index);
  for (const auto& [sym, value] : o.dims) {
    if (!symbols.count(sym)) {
      throw RunnerError(ErrorKind::kRequestRefused, "--dims " + sym + "=" + std::to_string(value) +
                                                        ": the bundle has no symbol '" + sym + "'");
    }
    symbols[sym] = value;
  }
  return symbols;
}

}  // namespace trt_edge::runner::cli
