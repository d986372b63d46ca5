#include "runtime/data/run_results.h"

#include <nlohmann/json.hpp>

#include "runtime/core/logger.h"
#include "runtime/data/base64.h"
#include "runtime/core/file_io.h"
#include "runtime/data/npy.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;

// The key Polygraphy adds to every encoded object, and its older form
// ("__polygraphy_encoded_<class>": "polygraphy_serialized_json_type").
constexpr char kClassKey[] = "polygraphy_class";
constexpr char kLegacyClassPrefix[] = "__polygraphy_encoded_";
constexpr char kLegacyClassValue[] = "polygraphy_serialized_json_type";
// Outputs are written with the class name every Polygraphy since 0.30 reads
// (0.49+ writes "LazyArray" and reads both).
constexpr char kLazyArrayClass[] = "LazyNumpyArray";

// Where in which file a value sits, for error messages.
struct Where {
  const std::string& source;
  std::string path;

  Where operator/(const std::string& child) const { return {source, path + child}; }
  [[noreturn]] void fail(const std::string& what) const {
    VKG_THROW("'" << source << "': " << (path.empty() ? "" : path + ": ") << what);
  }
};

// "['name']" and "name[3]" path parts. (Built with += to stay clear of a GCC 12 -Wrestrict false positive.)
std::string key_path(const std::string& s) {
  std::string out = "['";
  out += s;
  out += "']";
  return out;
}
std::string indexed(const std::string& prefix, size_t i) {
  std::string out = prefix;
  out += '[';
  out += std::to_string(i);
  out += ']';
  return out;
}

std::string json_type(const Json& j) { return j.type_name(); }

// The Polygraphy class an encoded object declares, or "" for a plain object.
std::string class_of(const Json& j) {
  if (!j.is_object()) return "";
  if (auto it = j.find(kClassKey); it != j.end() && it->is_string()) return it->get<std::string>();
  for (const auto& [key, value] : j.items()) {
    if (key.rfind(kLegacyClassPrefix, 0) == 0 && value.is_string() && value.get<std::string>() == kLegacyClassValue) {
      return key.substr(sizeof(kLegacyClassPrefix) - 1);
    }
  }
  return "";
}

bool is_class_marker(const std::string& key) { return key == kClassKey || key.rfind(kLegacyClassPrefix, 0) == 0; }

const Json& member(const Json& j, const char* key, const Where& where) {
  auto it = j.find(key);
  if (it == j.end()) where.fail(std::string("missing key \"") + key + "\"");
  return *it;
}

// Older Polygraphy stored the .npy bytes as a latin-1 string instead of base64.
// Returns nullopt if the UTF-8 text has characters outside latin-1.
std::optional<std::string> latin1_bytes(const std::string& utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = uint8_t(utf8[i]);
    if (c < 0x80) {
      out += char(c);
    } else if ((c == 0xc2 || c == 0xc3) && i + 1 < utf8.size() && (uint8_t(utf8[i + 1]) & 0xc0) == 0x80) {
      out += char(((c & 0x1f) << 6) | (uint8_t(utf8[i + 1]) & 0x3f));
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

Tensor decode_ndarray(const Json& j, const Where& where) {
  const Json& array = member(j, "array", where);
  if (!array.is_string()) where.fail("\"array\" must be a string, not " + json_type(array));
  const std::string& text = array.get_ref<const std::string&>();
  std::string bytes;
  try {
    bytes = base64_decode(text);
  } catch (const Error& base64_error) {
    auto legacy = latin1_bytes(text);
    if (!legacy || legacy->rfind("\x93NUMPY", 0) != 0) where.fail(base64_error.what());
    bytes = std::move(*legacy);
  }
  try {
    return load_npy(bytes);
  } catch (const Error& e) {
    where.fail(e.what());
  }
}

Tensor decode_array(const Json& j, const Where& where) {
  const std::string cls = class_of(j);
  if (cls == "ndarray") return decode_ndarray(j, where);
  if (cls == "LazyArray" || cls == "LazyNumpyArray") return decode_array(member(j, "values", where), where);
  if (cls == "Tensor") {
    where.fail(
        "holds a PyTorch tensor (polygraphy_class \"Tensor\"), which vkgraphy cannot read; "
        "save the outputs as numpy arrays instead");
  }
  if (cls.empty()) {
    where.fail("expected an encoded array ({\"array\": ..., \"polygraphy_class\": \"ndarray\"}), found " +
               (j.is_object() ? std::string("an object without \"polygraphy_class\"") : json_type(j)));
  }
  where.fail("unsupported polygraphy_class \"" + cls + "\" where an array was expected");
}

IterationResult decode_iteration(const Json& j, const std::string& default_runner, const Where& where) {
  const std::string cls = class_of(j);
  if (cls != "IterationResult") {
    where.fail("expected an IterationResult, found " +
               (cls.empty() ? json_type(j) : "polygraphy_class \"" + cls + "\""));
  }
  IterationResult result;
  result.runner_name = default_runner;
  if (auto it = j.find("runner_name"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) where.fail("\"runner_name\" must be a string");
    result.runner_name = it->get<std::string>();
  }
  if (auto it = j.find("runtime"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) where.fail("\"runtime\" must be a number or null");
    result.runtime = it->get<double>();
  }
  const Json& outputs = member(j, "outputs", where);
  if (!outputs.is_object()) where.fail("\"outputs\" must be an object, not " + json_type(outputs));
  for (const auto& [name, value] : outputs.items()) {
    result.outputs.emplace_back(name, decode_array(value, where / (".outputs" + key_path(name))));
  }
  return result;
}

Json parse_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    VKG_THROW("'" << source << "': not valid JSON: " << e.what());
  }
}

std::string dump_json(const Json& j) {
  try {
    return j.dump(4, ' ', /*ensure_ascii=*/true);  // json.dumps(indent=4), as Polygraphy writes
  } catch (const Json::exception& e) {
    VKG_THROW("cannot encode JSON: " << e.what());
  }
}

Json encode_ndarray(const std::string& name, const Tensor& tensor) {
  Json j;
  if (tensor.dtype() == DType::BFloat16) {
    VKG_WARNING("Tensor '" << name << "' is bfloat16, which numpy cannot store; saving it as float32");
    j["array"] = base64_encode(save_npy(tensor.cast(DType::Float32)));
  } else {
    j["array"] = base64_encode(save_npy(tensor));
  }
  j[kClassKey] = "ndarray";
  return j;
}

}  // namespace

const Tensor* IterationResult::find(const std::string& output) const {
  for (const auto& [name, tensor] : outputs) {
    if (name == output) return &tensor;
  }
  return nullptr;
}

TensorMap IterationResult::to_map() const {
  TensorMap map;
  for (const auto& [name, tensor] : outputs) map.emplace(name, tensor);
  return map;
}

namespace {

RunResults run_results_from(const Json& root, const Where& top) {
  if (root.is_array()) {
    top.fail("holds a list, which is an inputs file (as written by --save-inputs), not outputs (RunResults)");
  }
  const std::string cls = class_of(root);
  if (cls != "RunResults") {
    top.fail("not a Polygraphy outputs file: expected polygraphy_class \"RunResults\", found " +
             (cls.empty() ? json_type(root) + " without a class" : "\"" + cls + "\""));
  }
  const Json& lst = member(root, "lst", top);
  if (!lst.is_array()) top.fail("\"lst\" must be a list, not " + json_type(lst));

  RunResults results;
  for (size_t i = 0; i < lst.size(); ++i) {
    const Where entry = top / indexed("lst", i);
    const Json& pair = lst[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array()) {
      entry.fail("expected a [runner_name, [IterationResult, ...]] pair");
    }
    const std::string runner = pair[0].get<std::string>();
    std::vector<IterationResult> iterations;
    for (size_t k = 0; k < pair[1].size(); ++k) {
      iterations.push_back(decode_iteration(pair[1][k], runner, entry / indexed("[1]", k)));
    }
    results.runs.emplace_back(runner, std::move(iterations));
  }
  return results;
}

}  // namespace

std::string run_results_to_json(const RunResults& results) {
  Json lst = Json::array();
  for (const auto& [runner, iterations] : results.runs) {
    Json encoded_iterations = Json::array();
    for (const auto& iteration : iterations) {
      Json outputs = Json::object();
      for (const auto& [name, tensor] : iteration.outputs) {
        Json lazy;
        lazy["values"] = encode_ndarray(name, tensor);
        lazy[kClassKey] = kLazyArrayClass;
        outputs[name] = std::move(lazy);
      }
      Json encoded;
      encoded["outputs"] = std::move(outputs);
      encoded["runtime"] = iteration.runtime;
      encoded["runner_name"] = iteration.runner_name;
      encoded[kClassKey] = "IterationResult";
      encoded_iterations.push_back(std::move(encoded));
    }
    lst.push_back(Json::array({runner, std::move(encoded_iterations)}));
  }
  Json root;
  root["lst"] = std::move(lst);
  root[kClassKey] = "RunResults";
  return dump_json(root);
}

namespace {

// One {name: array} dict of an inputs file.
TensorMap feed_from(const Json& feed, const Where& where) {
  if (!feed.is_object() || !class_of(feed).empty()) where.fail("expected a {name: array} dict");
  TensorMap map;
  for (const auto& [name, value] : feed.items()) {
    if (is_class_marker(name)) continue;
    map.emplace(name, decode_array(value, where / key_path(name)));
  }
  return map;
}

std::vector<TensorMap> inputs_from(const Json& root, const Where& top) {
  if (!root.is_array()) {
    const std::string cls = class_of(root);
    if (cls == "RunResults") {
      top.fail(
          "holds outputs (RunResults), not inputs; an inputs file is a list of {name: array} "
          "dicts as written by --save-inputs");
    }
    top.fail("not an inputs file: expected a list of {name: array} dicts, found " + json_type(root));
  }
  std::vector<TensorMap> inputs;
  for (size_t i = 0; i < root.size(); ++i) inputs.push_back(feed_from(root[i], top / indexed("", i)));
  return inputs;
}

}  // namespace

RunResults run_results_from_json(std::string_view json, const std::string& source) {
  return run_results_from(parse_json(json, source), Where{source, ""});
}

std::vector<TensorMap> inputs_from_json(std::string_view json, const std::string& source) {
  return inputs_from(parse_json(json, source), Where{source, ""});
}

DataFile data_file_from_json(std::string_view json, const std::string& source) {
  const Json root = parse_json(json, source);
  const Where top{source, ""};
  DataFile file;
  if (root.is_object() && class_of(root) == "RunResults") {
    file.holds_outputs = true;
    file.outputs = run_results_from(root, top);
  } else if (root.is_object() && class_of(root).empty()) {
    file.inputs.push_back(feed_from(root, top));  // one feed dict alone
  } else {
    file.inputs = inputs_from(root, top);
  }
  return file;
}

std::string inputs_to_json(const std::vector<TensorMap>& inputs) {
  Json root = Json::array();
  for (const auto& feed : inputs) {
    Json encoded = Json::object();
    for (const auto& [name, tensor] : feed) encoded[name] = encode_ndarray(name, tensor);
    root.push_back(std::move(encoded));
  }
  return dump_json(root);
}

RunResults load_run_results(const std::string& path) {
  return run_results_from_json(read_whole_file(path, "outputs file"), path);
}

void save_run_results(const std::string& path, const RunResults& results) {
  write_file_atomically(path, run_results_to_json(results), "outputs file");
}

std::vector<TensorMap> load_inputs(const std::string& path) {
  return inputs_from_json(read_whole_file(path, "inputs file"), path);
}

DataFile load_data_file(const std::string& path) {
  return data_file_from_json(read_whole_file(path, "data file"), path);
}

void save_inputs(const std::string& path, const std::vector<TensorMap>& inputs) {
  write_file_atomically(path, inputs_to_json(inputs), "inputs file");
}

}  // namespace vkg
