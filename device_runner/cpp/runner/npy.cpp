#include "npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "dtypes.h"

namespace trt_edge::runner {
namespace {

std::string value_of(const std::string& header, const std::string& key, const std::string& path) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) {
    throw std::runtime_error(path + ": .npy header has no '" + key + "'");
  }
  auto start = header.find(':', at) + 1;
  while (start < header.size() && header[start] == ' ') {
    ++start;
  }
  if (header[start] == '(') {
    return header.substr(start, header.find(')', start) - start + 1);
  }
  const auto end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

// bfloat16 is the upper half of a float32: widening is a shift, and exact.
Array widened_to_float32(const Array& array) {
  Array out;
  out.dtype = "float32";
  out.shape = array.shape;
  const size_t n = array.data.size() / 2;
  out.data.assign(n * 4, 0);
  for (size_t i = 0; i < n; ++i) {
    out.data[4 * i + 2] = array.data[2 * i];      // little-endian: low byte of the bf16
    out.data[4 * i + 3] = array.data[2 * i + 1];  // high byte (sign, exponent)
  }
  return out;
}

}  // namespace

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
  }
  return n;
}

size_t dtype_size(const std::string& dtype) noexcept {
  const DtypeInfo* d = find_dtype(dtype);
  return d == nullptr ? 0 : d->itemsize;
}

Array read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(path + ": cannot open");
  }
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    throw std::runtime_error(path + ": not a .npy file");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint8_t len[2];
    in.read(reinterpret_cast<char*>(len), 2);
    header_len = static_cast<uint32_t>(len[0] | (len[1] << 8));
  } else {
    uint8_t len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    header_len = static_cast<uint32_t>(len[0] | (len[1] << 8) | (len[2] << 16) | (len[3] << 24));
  }
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  const std::string descr = value_of(header, "descr", path);
  if (value_of(header, "fortran_order", path).find("False") == std::string::npos) {
    throw std::runtime_error(path + ": Fortran-order arrays are not supported; save C-order");
  }
  Array array;
  for (const auto& d : kDtypes) {
    if (d.npy_descr != nullptr && descr.find(d.npy_descr) != std::string::npos) {
      array.dtype = d.name;
    }
  }
  if (array.dtype.empty()) {
    throw std::runtime_error(path + ": dtype " + descr + " is not supported");
  }
  const std::string shape = value_of(header, "shape", path);
  size_t pos = 1;
  while (pos < shape.size()) {
    const auto next = shape.find_first_of(",)", pos);
    const std::string item = shape.substr(pos, next - pos);
    if (item.find_first_of("0123456789") != std::string::npos) {
      array.shape.push_back(std::stoll(item));
    }
    pos = next + 1;
  }
  array.data.resize(static_cast<size_t>(array.numel()) * dtype_size(array.dtype));
  in.read(reinterpret_cast<char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  if (static_cast<size_t>(in.gcount()) != array.data.size()) {
    throw std::runtime_error(path + ": truncated (expected " + std::to_string(array.data.size()) +
                             " data bytes)");
  }
  return array;
}

void write_npy(const std::string& path, const Array& array) {
  const DtypeInfo* info = find_dtype(array.dtype);
  if (info == nullptr) {
    throw std::runtime_error(path + ": cannot write dtype " + array.dtype);
  }
  if (info->npy_descr == nullptr) {
    // numpy has no such dtype (bfloat16): widen to float32, exactly, as Python does.
    write_npy(path, widened_to_float32(array));
    return;
  }
  const char* descr = info->npy_descr;
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    shape += std::to_string(array.shape[i]) + (array.shape.size() == 1 ? "," : (i + 1 < array.shape.size() ? ", " : ""));
  }
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error(path + ": cannot write");
    }
    const uint16_t len = static_cast<uint16_t>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    const char len_bytes[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
    out.write(len_bytes, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(array.data.data()),
              static_cast<std::streamsize>(array.data.size()));
    if (!out) {
      throw std::runtime_error(path + ": write failed");
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace trt_edge::runner
