// Plain-data keys of the builder's files: what a layer computes (LayerSignature)
// and which device measured it (DeviceIdentity). Both print, compare and turn
// into JSON; neither includes Vulkan headers.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/graph.h"

namespace vkg {

// The precision a layer is built in.
enum class Precision { FP32, FP16 };

// "fp32" / "fp16".
const char* precision_name(Precision p);
// Parses "fp32" / "fp16"; nullopt for anything else.
std::optional<Precision> parse_precision(std::string_view text);

// What a layer computes, independent of node and tensor names and of the
// device: two layers with equal signatures can share timing measurements.
struct LayerSignature {
  std::string op_type;                    // "Conv"; "domain::Op" outside the default ONNX domain
  std::string attributes;                 // canonical text: sorted by name, floats as exact round-trip text
  std::vector<std::string> inputs;        // per input: "float32[1,3,224,224]", "none" when omitted
  std::vector<std::string> outputs;       // same form; "?" for an unknown dtype or rank
  Precision precision = Precision::FP32;  // the precision asked for

  // One line holding every field; the key is a hash of it.
  std::string canonical_text() const;
  // Stable 16-hex-digit key (FNV-1a 64 of canonical_text()), the same on every
  // platform and run.
  std::string key() const;

  bool operator==(const LayerSignature&) const = default;
};

std::ostream& operator<<(std::ostream& os, const LayerSignature& s);

// Builds the signature of `node`. `inputs`/`outputs` hold the type and shape of
// each of node.inputs/node.outputs, in order (their names are ignored; an entry
// for an omitted optional tensor, name "", prints as "none"). Throws Error
// naming the node when the counts do not match.
LayerSignature make_layer_signature(const Node& node, const std::vector<ValueInfo>& inputs,
                                    const std::vector<ValueInfo>& outputs, Precision precision);

// Which device (and which vkgraphy) produced a measurement. Filled by the
// caller from the Vulkan device properties; a timing cache entry applies only
// to an equal identity.
struct DeviceIdentity {
  std::string device_name;          // "NVIDIA GeForce RTX 4090", "llvmpipe (LLVM 15.0.6, 256 bits)"
  uint32_t vendor_id = 0;           // VkPhysicalDeviceProperties::vendorID
  uint32_t device_id = 0;           // VkPhysicalDeviceProperties::deviceID
  std::string driver_version;       // driver version as text, e.g. "535.104.5" or "Mesa 22.3.6"
  std::string pipeline_cache_uuid;  // 32 lowercase hex digits
  std::string vkgraphy_version;     // VKGRAPHY_VERSION of the build that measured
  // Device features switched off (DeviceInfo::switched_off, comma-separated; "" for none): a
  // tactic measured without texel buffers or 64-bit integers ran other shader builds.
  std::string switched_off;

  bool operator==(const DeviceIdentity&) const = default;
  // "llvmpipe (vendor 0x10005, device 0x0, driver Mesa 22.3.6, vkgraphy 0.1.0)"
  std::string describe() const;
};

std::ostream& operator<<(std::ostream& os, const DeviceIdentity& d);

// JSON form shared by the replay and timing-cache files:
// {"name", "vendor_id", "device_id", "driver_version", "pipeline_cache_uuid", "vkgraphy_version"},
// and "switched_off" where features were switched off (absent: none).
nlohmann::ordered_json device_identity_to_json(const DeviceIdentity& d);
// Reads that form. Throws Error "'<file>': <json_path>: <what is wrong>" on a
// missing or mistyped field.
DeviceIdentity device_identity_from_json(const nlohmann::ordered_json& j, const std::string& file,
                                         const std::string& json_path);

// Strict readers shared by the engine's JSON files (replay, timing cache). A
// JsonPlace is where a value sits ("'replay.json': layers[3].tactic"); every
// failure throws Error naming it.
struct JsonPlace {
  std::string file;
  std::string path;  // "" for the document root

  JsonPlace field(const std::string& key) const;  // ".key" (or "key" at the root)
  JsonPlace index(size_t i) const;                // "[i]"
  [[noreturn]] void fail(const std::string& what) const;
};

// Checks the header of one of vkgraphy's JSON files: `root` is an object whose
// "format" is `format` and "version" is `version`. Fails naming `what` ("tactic
// replay") and what the file is instead: "not a tactic replay: it is a
// Polygraphy RunResults file", "... format is \"x\", expected \"y\"",
// "unsupported tactic replay version 7 (this vkgraphy reads version 1)".
void json_check_header(const nlohmann::ordered_json& root, const JsonPlace& where, const std::string& format,
                       int version, const std::string& what);

// Parses a whole JSON document; fails with "not valid JSON: ..." at `where`.
nlohmann::ordered_json parse_json_text(const std::string& text, const JsonPlace& where);

// The member `key` of object `j`; fails when `j` is not an object or lacks it.
const nlohmann::ordered_json& json_member(const nlohmann::ordered_json& j, const std::string& key,
                                          const JsonPlace& where);
std::string json_string(const nlohmann::ordered_json& j, const std::string& key, const JsonPlace& where);
// The optional member `key`: an array of strings ({} when absent).
std::vector<std::string> json_optional_strings(const nlohmann::ordered_json& j, const std::string& key,
                                               const JsonPlace& where);
// An integer in [0, max].
uint64_t json_unsigned(const nlohmann::ordered_json& j, const std::string& key, uint64_t max, const JsonPlace& where);
// A finite number >= 0.
double json_non_negative(const nlohmann::ordered_json& j, const std::string& key, const JsonPlace& where);
Precision json_precision(const nlohmann::ordered_json& j, const std::string& key, const JsonPlace& where);
// A validation error (tactic_validation.h) as the files hold it: a number >= 0, or "inf".
nlohmann::ordered_json validation_error_json(double error);
double json_validation_error(const nlohmann::ordered_json& j, const std::string& key, const JsonPlace& where);

}  // namespace vkg
