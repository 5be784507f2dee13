// Base64 (RFC 4648, standard alphabet, padded): how --serve's `infer` carries tensor bytes
// inside JSON lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trt_edge::runner {

std::string base64_encode(const std::vector<uint8_t>& bytes);

/// The bytes of padded base64 `text`; nullopt for any other character, length or padding.
std::optional<std::vector<uint8_t>> base64_decode(const std::string& text);

}  // namespace trt_edge::runner
