// NumPy .npy files: the input and output format of trt-edge-run, so a test (or a
// person) exchanges tensors with the Python runner using np.save / np.load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trt_edge::runner {

/// A C-order array: dtype as the bundle spells it ("float32", "int64", ...).
struct Array {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numel() const;
};

/// Bytes per element of a bundle dtype, or 0 when this runner does not support it.
size_t dtype_size(const std::string& dtype) noexcept;

/// Reads a little-endian, C-order .npy (format 1.0–3.0); throws std::runtime_error naming the file.
Array read_npy(const std::string& path);

/// Writes `array` as .npy 1.0 via a temporary file renamed into place.
void write_npy(const std::string& path, const Array& array);

}  // namespace trt_edge::runner
