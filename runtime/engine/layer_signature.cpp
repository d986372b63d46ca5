#include "runtime/engine/layer_signature.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "runtime/core/error.h"
#include "runtime/core/hash.h"
#include "runtime/engine/graph_optimizer.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Shortest text that reads back to exactly the same float.
std::string exact_float(float f) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, result.ptr);
}

// Quoted and escaped (any byte outside printable ASCII as \xHH), so no string
// can fake a separator.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto byte = uint8_t(c);
    if (c == '"' || c == '\\' || byte < 0x20 || byte >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(byte));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

template <class T, class F> std::string list_text(const std::vector<T>& values, F&& one) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += one(values[i]);
  }
  return out + "]";
}

std::string attribute_text(const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::Float:
      return "f:" + exact_float(a.f);
    case Attribute::Kind::Int:
      return "i:" + std::to_string(a.i);
    case Attribute::Kind::String:
      return "s:" + quoted(a.s);
    case Attribute::Kind::Tensor: {
      const auto bytes = std::string_view(reinterpret_cast<const char*>(a.t.raw()), a.t.nbytes());
      return "t:" + std::string(dtype_name(a.t.dtype())) + shape_to_string(a.t.shape()) + ":" + hex64(fnv1a64(bytes));
    }
    case Attribute::Kind::Floats:
      return "floats:" + list_text(a.floats, exact_float);
    case Attribute::Kind::Ints:
      return "ints:" + list_text(a.ints, [](int64_t v) { return std::to_string(v); });
    case Attribute::Kind::Strings:
      return "strings:" + list_text(a.strings, quoted);
    case Attribute::Kind::Graph:
      return "graph";
  }
  return "?";
}

// "float32[1,3,h,?]"; dim_param names are kept, unknown dims print as "?".
std::string tensor_text(const ValueInfo& v) {
  std::string out = v.dtype ? dtype_name(*v.dtype) : "?";
  if (!v.shape) return out + "[?]";
  out += list_text(*v.shape, [](const Dim& d) {
    if (d.known()) return std::to_string(d.value);
    return d.param.empty() ? std::string("?") : d.param;
  });
  return out;
}

std::vector<std::string> tensor_texts(const std::vector<std::string>& names, const std::vector<ValueInfo>& infos) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) out.push_back(names[i].empty() ? "none" : tensor_text(infos[i]));
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

// A value as it appears in a message: primitives as JSON text, containers by type.
std::string shown(const Json& v) { return v.is_primitive() ? v.dump() : std::string("an ") + v.type_name(); }

}  // namespace

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::FP32:
      return "fp32";
    case Precision::FP16:
      return "fp16";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view text) {
  if (text == "fp32") return Precision::FP32;
  if (text == "fp16") return Precision::FP16;
  return std::nullopt;
}

std::string LayerSignature::canonical_text() const {
  return "op=" + op_type + " attrs={" + attributes + "} in=(" + joined(inputs) + ") out=(" + joined(outputs) +
         ") precision=" + precision_name(precision);
}

std::string LayerSignature::key() const { return hex64(fnv1a64(canonical_text())); }

std::ostream& operator<<(std::ostream& os, const LayerSignature& s) { return os << s.canonical_text(); }

LayerSignature make_layer_signature(const Node& node, const std::vector<ValueInfo>& inputs,
                                    const std::vector<ValueInfo>& outputs, Precision precision) {
  VKG_CHECK(inputs.size() == node.inputs.size(), node.describe()
                                                     << ": layer signature got " << inputs.size() << " input types for "
                                                     << node.inputs.size() << " inputs");
  VKG_CHECK(outputs.size() == node.outputs.size(), node.describe()
                                                       << ": layer signature got " << outputs.size()
                                                       << " output types for " << node.outputs.size() << " outputs");
  LayerSignature s;
  s.op_type = node.domain.empty() || node.domain == "ai.onnx" ? node.op_type : node.domain + "::" + node.op_type;
  for (const auto& [name, attr] : node.attrs) {  // std::map: already sorted by name
    if (!s.attributes.empty()) s.attributes += ',';
    // A fused scale and shift after the activation are constants like the weights: they change
    // the result, not the work, so layers that differ only in them share timings.
    const bool epilogue_constant = name == kPostScaleAttr || name == kPostShiftAttr;
    s.attributes += name + "=" + (epilogue_constant ? std::string("f:*") : attribute_text(attr));
  }
  s.inputs = tensor_texts(node.inputs, inputs);
  s.outputs = tensor_texts(node.outputs, outputs);
  s.precision = precision;
  return s;
}

std::string DeviceIdentity::describe() const {
  char ids[64];
  std::snprintf(ids, sizeof ids, "vendor 0x%x, device 0x%x", unsigned(vendor_id), unsigned(device_id));
  return device_name + " (" + ids + ", driver " + driver_version + ", vkgraphy " + vkgraphy_version +
         (switched_off.empty() ? "" : ", switched off: " + switched_off) + ")";
}

std::ostream& operator<<(std::ostream& os, const DeviceIdentity& d) { return os << d.describe(); }

Json device_identity_to_json(const DeviceIdentity& d) {
  Json j = Json::object();
  j["name"] = d.device_name;
  j["vendor_id"] = d.vendor_id;
  j["device_id"] = d.device_id;
  j["driver_version"] = d.driver_version;
  j["pipeline_cache_uuid"] = d.pipeline_cache_uuid;
  j["vkgraphy_version"] = d.vkgraphy_version;
  if (!d.switched_off.empty()) j["switched_off"] = d.switched_off;
  return j;
}

DeviceIdentity device_identity_from_json(const Json& j, const std::string& file, const std::string& json_path) {
  const JsonPlace where{file, json_path};
  if (!j.is_object()) where.fail(std::string("expected an object, got ") + j.type_name());
  DeviceIdentity d;
  d.device_name = json_string(j, "name", where);
  d.vendor_id = uint32_t(json_unsigned(j, "vendor_id", UINT32_MAX, where));
  d.device_id = uint32_t(json_unsigned(j, "device_id", UINT32_MAX, where));
  d.driver_version = json_string(j, "driver_version", where);
  d.pipeline_cache_uuid = json_string(j, "pipeline_cache_uuid", where);
  d.vkgraphy_version = json_string(j, "vkgraphy_version", where);
  if (j.contains("switched_off")) d.switched_off = json_string(j, "switched_off", where);
  return d;
}

JsonPlace JsonPlace::field(const std::string& key) const {
  std::string p = path;
  if (!p.empty()) p += '.';
  p += key;
  return {file, p};
}

JsonPlace JsonPlace::index(size_t i) const {
  std::string p = path;
  p += '[';
  p += std::to_string(i);
  p += ']';
  return {file, p};
}

void JsonPlace::fail(const std::string& what) const {
  VKG_THROW("'" << file << "': " << (path.empty() ? "" : path + ": ") << what);
}

namespace {

// What a JSON document without vkgraphy's "format" key is, for errors.
std::string describe_foreign_json(const Json& root) {
  if (root.is_object() && root.contains("polygraphy_class") && root["polygraphy_class"].is_string())
    return "it is a Polygraphy " + root["polygraphy_class"].get<std::string>() + " file";
  if (root.is_array()) return "it is a JSON list (saved inputs are one)";
  if (!root.is_object()) return std::string("it is a JSON ") + root.type_name() + ", not an object";
  return "it has no \"format\" key";
}

}  // namespace

void json_check_header(const Json& root, const JsonPlace& where, const std::string& format, int version,
                       const std::string& what) {
  if (!root.is_object() || !root.contains("format")) where.fail("not a " + what + ": " + describe_foreign_json(root));
  const std::string found = json_string(root, "format", where);
  if (found != format)
    where.field("format").fail("not a " + what + ": format is \"" + found + "\", expected \"" + format + "\"");
  const Json& v = json_member(root, "version", where);
  if (v != version) {
    where.field("version").fail("unsupported " + what + " version " + v.dump() + " (this vkgraphy reads version " +
                                std::to_string(version) + ")");
  }
}

Json parse_json_text(const std::string& text, const JsonPlace& where) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    where.fail(std::string("not valid JSON: ") + e.what());
  }
}

const Json& json_member(const Json& j, const std::string& key, const JsonPlace& where) {
  if (!j.is_object()) where.fail(std::string("expected an object, got ") + j.type_name());
  const auto it = j.find(key);
  if (it == j.end()) where.fail("missing key \"" + key + "\"");
  return *it;
}

std::string json_string(const Json& j, const std::string& key, const JsonPlace& where) {
  const Json& v = json_member(j, key, where);
  if (!v.is_string()) where.field(key).fail(std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

std::vector<std::string> json_optional_strings(const Json& j, const std::string& key, const JsonPlace& where) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key)) return out;
  const Json& v = j[key];
  if (!v.is_array()) where.field(key).fail(std::string("expected an array of strings, got ") + v.type_name());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) where.field(key).index(i).fail(std::string("expected a string, got ") + v[i].type_name());
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

uint64_t json_unsigned(const Json& j, const std::string& key, uint64_t max, const JsonPlace& where) {
  const Json& v = json_member(j, key, where);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
    where.field(key).fail("expected an integer from 0 to " + std::to_string(max) + ", got " + shown(v));
  }
  return v.get<uint64_t>();
}

double json_non_negative(const Json& j, const std::string& key, const JsonPlace& where) {
  const Json& v = json_member(j, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    where.field(key).fail("expected a number >= 0, got " + shown(v));
  }
  return v.get<double>();
}

Json validation_error_json(double error) {
  if (std::isinf(error)) return "inf";
  return error;
}

double json_validation_error(const Json& j, const std::string& key, const JsonPlace& where) {
  const Json& v = json_member(j, key, where);
  if (v.is_string() && v.get<std::string>() == "inf") return std::numeric_limits<double>::infinity();
  return json_non_negative(j, key, where);
}

Precision json_precision(const Json& j, const std::string& key, const JsonPlace& where) {
  const std::string text = json_string(j, key, where);
  const auto p = parse_precision(text);
  if (!p) where.field(key).fail("unknown precision \"" + text + "\" (expected \"fp32\" or \"fp16\")");
  return *p;
}

}  // namespace vkg
