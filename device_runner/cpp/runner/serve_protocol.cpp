#include "serve_protocol.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "base64.h"

namespace trt_edge::runner::serve {
namespace {

using Json = nlohmann::json;

RequestError usage(const std::string& field, const std::string& message) {
  return RequestError("usage", field + ": " + message, field);
}

void only_fields(const Json& object, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (!allowed.count(key)) {
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      const std::string field = where.empty() ? key : where + "." + key;
      throw usage(field, "unknown field (expected " + names + ")");
    }
  }
}

int64_t integer_in(const Json& v, const std::string& field, int64_t low, int64_t high) {
  if (!v.is_number_integer()) throw usage(field, "expected an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(high)) {
    throw usage(field, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  }
  const auto x = v.get<int64_t>();
  if (x < low || x > high) {
    throw usage(field, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  }
  return x;
}

double number_in(const Json& v, const std::string& field, double low, bool low_open, double high) {
  if (!v.is_number()) throw usage(field, "expected a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < low || (low_open && x == low) || x > high) {
    throw usage(field, std::string("must be in ") + (low_open ? "(" : "[") + Json(low).dump() +
                           ", " + Json(high).dump() + "]");
  }
  return x;
}

bool boolean(const Json& v, const std::string& field) {
  if (!v.is_boolean()) throw usage(field, "expected true or false");
  return v.get<bool>();
}

std::vector<int64_t> token_ids(const Json& v, const std::string& field, bool non_empty) {
  if (!v.is_array()) throw usage(field, "expected an array of token ids");
  if (non_empty && v.empty()) throw usage(field, "is empty: pass at least one token id");
  std::vector<int64_t> ids;
  for (size_t i = 0; i < v.size(); ++i) {
    ids.push_back(integer_in(v[i], field + "[" + std::to_string(i) + "]", 0,
                             std::numeric_limits<int64_t>::max()));
  }
  return ids;
}

void parse_generate(const Json& doc, ServeRequest& r) {
  only_fields(doc,
              {"id", "op", "prompt_ids", "max_new_tokens", "sampling", "stop_token_ids",
               "ignore_eos", "stream", "reuse_prefix", "constrained"},
              "");
  GenerationRequest& g = r.generate;
  if (!doc.contains("prompt_ids")) throw usage("prompt_ids", "missing: pass the prompt's token ids");
  g.prompt = token_ids(doc["prompt_ids"], "prompt_ids", true);
  if (doc.contains("max_new_tokens")) {
    g.max_new_tokens = integer_in(doc["max_new_tokens"], "max_new_tokens", 1,
                                  std::numeric_limits<int32_t>::max());
  }
  g.reuse_prefix = true;
  if (doc.contains("sampling")) {
    const Json& s = doc["sampling"];
    if (!s.is_object()) throw usage("sampling", "expected an object");
    only_fields(s, {"temperature", "top_k", "top_p", "repetition_penalty", "seed"}, "sampling");
    SamplingParams& p = g.sampling;
    if (s.contains("temperature")) {
      p.temperature = number_in(s["temperature"], "sampling.temperature", 0.0, false, 100.0);
    }
    if (s.contains("top_k")) {
      p.top_k = integer_in(s["top_k"], "sampling.top_k", 0, std::numeric_limits<int32_t>::max());
    }
    if (s.contains("top_p")) p.top_p = number_in(s["top_p"], "sampling.top_p", 0.0, true, 1.0);
    if (s.contains("repetition_penalty")) {
      p.repetition_penalty =
          number_in(s["repetition_penalty"], "sampling.repetition_penalty", 0.0, true, 100.0);
    }
    if (s.contains("seed")) {
      p.seed = static_cast<uint64_t>(
          integer_in(s["seed"], "sampling.seed", 0, std::numeric_limits<int64_t>::max()));
    }
  }
  if (doc.contains("stop_token_ids")) {
    g.stop_token_ids = token_ids(doc["stop_token_ids"], "stop_token_ids", false);
  }
  if (doc.contains("ignore_eos")) g.ignore_eos = boolean(doc["ignore_eos"], "ignore_eos");
  if (doc.contains("stream")) r.stream = boolean(doc["stream"], "stream");
  if (doc.contains("reuse_prefix")) g.reuse_prefix = boolean(doc["reuse_prefix"], "reuse_prefix");
  if (doc.contains("constrained")) r.constrained = boolean(doc["constrained"], "constrained");
}

void parse_mask(const Json& doc, ServeRequest& r) {
  only_fields(doc, {"id", "op", "target", "index", "allowed"}, "");
  MaskRequest& m = r.mask;
  if (!doc.contains("target") || !doc["target"].is_string()) {
    throw usage("target", "expected the id of the constrained generate request");
  }
  m.target = doc["target"].get<std::string>();
  if (!doc.contains("index")) throw usage("index", "missing: the index of the token it is for");
  m.index = integer_in(doc["index"], "index", 0, std::numeric_limits<int32_t>::max());
  if (!doc.contains("allowed") || !doc["allowed"].is_string()) {
    throw usage("allowed", "expected base64 of a little-endian uint32 bitset over the vocabulary");
  }
  const auto bytes = base64_decode(doc["allowed"].get<std::string>());
  if (!bytes) throw usage("allowed", "not padded base64 (RFC 4648)");
  if (bytes->size() % 4 != 0) {
    throw usage("allowed", "holds " + std::to_string(bytes->size()) +
                               " bytes; a bitset of uint32 words is a multiple of 4");
  }
  m.allowed.resize(bytes->size() / 4);
  for (size_t w = 0; w < m.allowed.size(); ++w) {
    uint32_t word = 0;
    for (size_t b = 0; b < 4; ++b) word |= static_cast<uint32_t>((*bytes)[w * 4 + b]) << (8 * b);
    m.allowed[w] = word;
  }
}

NamedArray parse_tensor(const Json& t, const std::string& field) {
  if (!t.is_object()) throw usage(field, "expected {\"name\", \"dtype\", \"shape\", \"b64\"}");
  only_fields(t, {"name", "dtype", "shape", "b64"}, field);
  for (const char* key : {"name", "dtype", "shape", "b64"}) {
    if (!t.contains(key)) throw usage(field + "." + key, "missing");
  }
  if (!t["name"].is_string()) throw usage(field + ".name", "expected a string");
  if (!t["dtype"].is_string()) throw usage(field + ".dtype", "expected a string");
  if (!t["b64"].is_string()) throw usage(field + ".b64", "expected a base64 string");
  if (!t["shape"].is_array()) throw usage(field + ".shape", "expected an array of sizes");
  NamedArray out;
  out.name = t["name"].get<std::string>();
  out.array.dtype = t["dtype"].get<std::string>();
  if (dtype_size(out.array.dtype) == 0) {
    throw usage(field + ".dtype", "'" + out.array.dtype + "' is not a dtype this runner reads");
  }
  for (size_t i = 0; i < t["shape"].size(); ++i) {
    out.array.shape.push_back(integer_in(t["shape"][i], field + ".shape[" + std::to_string(i) + "]",
                                         0, std::numeric_limits<int32_t>::max()));
  }
  auto bytes = base64_decode(t["b64"].get<std::string>());
  if (!bytes) throw usage(field + ".b64", "not padded base64 (RFC 4648)");
  const auto want = static_cast<size_t>(out.array.numel()) * dtype_size(out.array.dtype);
  if (bytes->size() != want) {
    throw usage(field + ".b64", "holds " + std::to_string(bytes->size()) + " bytes; shape and dtype need " +
                                    std::to_string(want));
  }
  out.array.data = std::move(*bytes);
  return out;
}

void parse_infer(const Json& doc, ServeRequest& r) {
  only_fields(doc, {"id", "op", "request", "inputs", "outputs"}, "");
  InferRequest& in = r.infer;
  if (doc.contains("request")) {
    const Json& q = doc["request"];
    if (!q.is_object() || q.size() != 1) {
      throw usage("request", "expected one of {\"phase\": P}, {\"profile\": N}, {\"auto\": true}");
    }
    if (q.contains("phase")) {
      if (!q["phase"].is_string()) throw usage("request.phase", "expected a phase name");
      in.phase = q["phase"].get<std::string>();
    } else if (q.contains("profile")) {
      in.profile = integer_in(q["profile"], "request.profile", 0, std::numeric_limits<int32_t>::max());
    } else if (q.contains("auto")) {
      if (!boolean(q["auto"], "request.auto")) throw usage("request.auto", "must be true");
      in.automatic = true;
    } else {
      throw usage("request." + q.begin().key(), "unknown field (expected phase, profile or auto)");
    }
  }
  if (!doc.contains("inputs")) throw usage("inputs", "missing: pass one tensor per bundle input");
  if (!doc["inputs"].is_array()) throw usage("inputs", "expected an array of tensors");
  for (size_t i = 0; i < doc["inputs"].size(); ++i) {
    in.inputs.push_back(parse_tensor(doc["inputs"][i], "inputs[" + std::to_string(i) + "]"));
  }
  if (doc.contains("outputs")) {
    const Json& o = doc["outputs"];
    if (!o.is_array()) throw usage("outputs", "expected an array of output names");
    std::vector<std::string> names;
    for (size_t i = 0; i < o.size(); ++i) {
      if (!o[i].is_string()) throw usage("outputs[" + std::to_string(i) + "]", "expected a name");
      names.push_back(o[i].get<std::string>());
    }
    in.outputs = names;
  }
}

}  // namespace

ServeRequest parse_request(const std::string& line) {
  Json doc;
  try {
    doc = Json::parse(line);
  } catch (const Json::parse_error& e) {
    throw RequestError("protocol", std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) throw RequestError("protocol", "a request is a JSON object");
  std::optional<std::string> id;
  if (doc.contains("id") && doc["id"].is_string() && !doc["id"].get<std::string>().empty()) {
    id = doc["id"].get<std::string>();
  }
  try {
    if (!id) throw RequestError("protocol", "id: missing or not a non-empty string", "id");
    if (!doc.contains("op") || !doc["op"].is_string()) {
      throw RequestError("protocol", "op: missing or not a string", "op");
    }
    ServeRequest r;
    r.id = *id;
    const std::string op = doc["op"].get<std::string>();
    if (op == "generate") {
      r.op = Op::kGenerate;
      parse_generate(doc, r);
    } else if (op == "infer") {
      r.op = Op::kInfer;
      parse_infer(doc, r);
    } else if (op == "cancel") {
      r.op = Op::kCancel;
      only_fields(doc, {"id", "op", "target"}, "");
      if (!doc.contains("target") || !doc["target"].is_string()) {
        throw usage("target", "expected the id of the request to cancel");
      }
      r.target = doc["target"].get<std::string>();
    } else if (op == "mask") {
      r.op = Op::kMask;
      parse_mask(doc, r);
    } else if (op == "ping" || op == "shutdown") {
      r.op = op == "ping" ? Op::kPing : Op::kShutdown;
      only_fields(doc, {"id", "op"}, "");
    } else {
      throw RequestError("protocol",
                         "op: '" + op + "' is not one of generate, infer, cancel, mask, ping, shutdown",
                         "op");
    }
    return r;
  } catch (RequestError& e) {
    e.id = id;
    throw;
  }
}

}  // namespace trt_edge::runner::serve
