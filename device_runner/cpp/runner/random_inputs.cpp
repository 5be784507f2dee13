#include "random_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dtypes.h"

namespace trt_edge::runner {
namespace {

/// splitmix64: tiny, fast, and the same sequence everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1]: never 0, so log() below is finite.
  double unit() { return (static_cast<double>(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0); }
  /// Standard normal (Box-Muller, one value per call).
  double normal() {
    const double pi = 3.14159265358979323846;
    return std::sqrt(-2.0 * std::log(unit())) * std::cos(2.0 * pi * unit());
  }
  /// Uniform integer in [low, high), high > low.
  int64_t integer(int64_t low, int64_t high) {
    const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    return static_cast<int64_t>(static_cast<uint64_t>(low) + next() % span);
  }

 private:
  uint64_t state_;
};

uint16_t to_half(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent <= 0) return static_cast<uint16_t>(sign);  // tiny: flush to zero
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00u);  // huge: infinity
  mantissa += 0x1000u;  // round to nearest
  if (mantissa & 0x800000u) {
    mantissa = 0;
    if (exponent + 1 >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent + 1) << 10));
  }
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13));
}

uint16_t to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

/// [low, high) of an integer dtype of `itemsize` bytes.
std::pair<int64_t, int64_t> dtype_range(const std::string& dtype) {
  if (dtype == "int8") return {-128, 128};
  if (dtype == "uint8") return {0, 256};
  if (dtype == "int16") return {-32768, 32768};
  if (dtype == "int32") return {std::numeric_limits<int32_t>::min(), int64_t{1} << 31};
  return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
}

template <typename T>
void fill_integers(Array& a, SplitMix64& rng, int64_t low, int64_t high) {
  auto* p = reinterpret_cast<T*>(a.data.data());
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = static_cast<T>(rng.integer(low, high));
}

template <typename T>
void fill_counting(Array& a) {
  auto* p = reinterpret_cast<T*>(a.data.data());
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = static_cast<T>(i);
}

/// A causal LM's cache positions (and, version 2, its attended window; version 3, the slot of
/// each row) are not data but where the call writes and reads the cache: random ones are
/// calls no application makes, which an attention kernel may refuse (the fused kernel needs
/// start + seq <= slots) or the slot check does (a slot named twice). Made up, they are a
/// prefill from an empty cache into distinct slots: 0..n-1.
bool counts_cache_slots(const Bundle& bundle, size_t index) {
  if (!bundle.llm) return false;
  return index == bundle.llm->positions_index ||
         (bundle.llm->window_input && index == bundle.llm->window_index) ||
         (bundle.llm->slot_input && index == bundle.llm->slot_index);
}

}  // namespace

std::map<std::string, int64_t> opt_symbols(const Bundle& bundle, int64_t index) {
  std::map<std::string, int64_t> symbols;
  if (bundle.profiles.empty()) return symbols;
  const size_t at = index >= 0 && index < static_cast<int64_t>(bundle.profiles.size())
                        ? static_cast<size_t>(index)
                        : 0;
  for (const auto& [sym, range] : bundle.profiles[at].dims) symbols[sym] = range.opt;
  return symbols;
}

std::vector<Array> random_inputs(const Bundle& bundle, const std::map<std::string, int64_t>& symbols,
                                 uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Array> inputs;
  uint64_t total = 0;
  for (size_t index = 0; index < bundle.inputs.size(); ++index) {
    const auto& spec = bundle.inputs[index];
    Array a;
    a.dtype = spec.dtype;
    a.shape = bundle.shape_of(spec, symbols);
    const DtypeInfo* info = find_dtype(spec.dtype);
    if (info == nullptr) {
      throw RunnerError(ErrorKind::kRequestRefused,
                        "input '" + spec.name + "': unsupported dtype " + spec.dtype)
          .with_input(spec.name);
    }
    uint64_t bytes = info->itemsize;
    for (size_t k = 0; k < a.shape.size(); ++k) {
      const int64_t d = a.shape[k];
      if (d < 0) {
        throw RunnerError(ErrorKind::kRequestRefused, "input '" + spec.name + "' dim " +
                                                          std::to_string(k) + " = " +
                                                          std::to_string(d) + " is negative")
            .with_input(spec.name);
      }
      if (d > 0 && bytes > kMaxGeneratedInputBytes / static_cast<uint64_t>(d)) {
        bytes = kMaxGeneratedInputBytes + 1;
        break;
      }
      bytes *= static_cast<uint64_t>(d);
    }
    total += bytes;
    if (bytes > kMaxGeneratedInputBytes || total > kMaxGeneratedInputBytes) {
      std::string shape;
      for (size_t i = 0; i < a.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape[i]);
      throw RunnerError(ErrorKind::kRequestRefused,
                        "input '" + spec.name + "' at shape [" + shape + "] would take the " +
                            "made-up inputs past " + std::to_string(kMaxGeneratedInputBytes) +
                            " bytes; pass smaller --dims or real inputs with --inputs")
          .with_input(spec.name);
    }
    a.data.assign(static_cast<size_t>(bytes), 0);
    const int64_t n = a.numel();
    if (spec.dtype == "float32" || spec.dtype == "float64" || spec.dtype == "float16" ||
        spec.dtype == "bfloat16") {
      for (int64_t i = 0; i < n; ++i) {
        const double v = rng.normal();
        if (spec.dtype == "float32") {
          reinterpret_cast<float*>(a.data.data())[i] = static_cast<float>(v);
        } else if (spec.dtype == "float64") {
          reinterpret_cast<double*>(a.data.data())[i] = v;
        } else {
          const uint16_t h = spec.dtype == "float16" ? to_half(static_cast<float>(v))
                                                     : to_bfloat16(static_cast<float>(v));
          std::memcpy(a.data.data() + 2 * i, &h, 2);
        }
      }
    } else if (counts_cache_slots(bundle, index) && (spec.dtype == "int64" || spec.dtype == "int32")) {
      if (spec.dtype == "int64") fill_counting<int64_t>(a);
      if (spec.dtype == "int32") fill_counting<int32_t>(a);
    } else if (spec.dtype == "bool") {
      for (int64_t i = 0; i < n; ++i) a.data[static_cast<size_t>(i)] = rng.next() & 1u;
    } else {
      auto [low, high] = spec.values ? *spec.values : std::pair<int64_t, int64_t>{0, 2};
      const auto [type_low, type_high] = dtype_range(spec.dtype);
      low = std::max(low, type_low);
      high = std::min(high, type_high);
      if (high <= low) {
        throw RunnerError(ErrorKind::kRequestRefused,
                          "input '" + spec.name + "': values [" + std::to_string(low) + ", " +
                              std::to_string(high) + ") is empty for " + spec.dtype +
                              "; pass real inputs with --inputs")
            .with_input(spec.name);
      }
      if (spec.dtype == "int64") fill_integers<int64_t>(a, rng, low, high);
      if (spec.dtype == "int32") fill_integers<int32_t>(a, rng, low, high);
      if (spec.dtype == "int16") fill_integers<int16_t>(a, rng, low, high);
      if (spec.dtype == "int8") fill_integers<int8_t>(a, rng, low, high);
      if (spec.dtype == "uint8") fill_integers<uint8_t>(a, rng, low, high);
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

}  // namespace trt_edge::runner
