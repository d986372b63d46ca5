#include "runtime/engine/engine_file.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/hash.h"
#include "runtime/core/version.h"

namespace vkg {

// Weights and SPIR-V words are stored as their in-memory bytes.
static_assert(std::endian::native == std::endian::little, "engine files are little-endian");

namespace {

using Json = nlohmann::ordered_json;

constexpr char kEngineWhat[] = "engine";
constexpr size_t kHeaderBytes = 24;  // magic, format version, flags, metadata length
constexpr size_t kLengthBytes = 8;   // the blob length and the checksum
constexpr uint64_t kBlobAlignment = 16;
constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr size_t kSpirvHeaderWords = 5;
// No tensor may claim more bytes than this (keeps every size computation far from overflow).
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 60;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += char((v >> (8 * i)) & 0xff);
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += char((v >> (8 * i)) & 0xff);
}

uint64_t get_le(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(uint8_t(bytes[at + size_t(i)])) << (8 * i);
  return v;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// One line of text: control characters (and, where the text quotes raw file
// bytes, anything outside printable ASCII) become '?'.
std::string single_line(std::string text, bool ascii_only) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || (ascii_only && u >= 0x80)) c = '?';
  }
  return text;
}

// ---- writing ----

// The blob: items appended at 16-byte aligned offsets, zero padding between.
class BlobWriter {
 public:
  uint64_t add(const void* data, size_t bytes) {
    blob_.resize((blob_.size() + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment, '\0');
    const uint64_t offset = blob_.size();
    blob_.append(static_cast<const char*>(data), bytes);
    return offset;
  }
  const std::string& bytes() const { return blob_; }

 private:
  std::string blob_;
};

Json dispatch_to_json(const Dispatch& d) {
  Json j = Json::object();
  j["shader"] = d.shader;
  j["spec"] = Json::array();
  for (const SpecValue& s : d.spec) j["spec"].push_back(Json::array({s.id, s.value}));
  j["bindings"] = Json::array();
  for (const BindingRef& b : d.bindings) j["bindings"].push_back(Json::array({binding_kind_name(b.kind), b.index}));
  j["push"] = d.push;
  j["groups"] = d.groups;
  if (d.subgroup_size != 0) j["subgroup_size"] = d.subgroup_size;
  return j;
}

Json plan_to_json(const EngineLayer& layer, BlobWriter& blob) {
  Json j = Json::object();
  j["dispatches"] = Json::array();
  for (const Dispatch& d : layer.plan.dispatches) j["dispatches"].push_back(dispatch_to_json(d));
  j["weights"] = Json::array();
  for (const Tensor& w : layer.plan.weights) {
    VKG_CHECK(w.dtype() == DType::Float32 || w.dtype() == DType::Float16 || w.dtype() == DType::Int32,
              "cannot store the engine: layer '" << layer.name << "' has a weight of dtype " << dtype_name(w.dtype())
                                                 << " (expected float32, float16 or int32)");
    Json wj = Json::object();
    wj["dtype"] = dtype_name(w.dtype());
    wj["shape"] = w.shape();
    wj["offset"] = blob.add(w.raw(), w.nbytes());
    wj["bytes"] = w.nbytes();
    j["weights"].push_back(std::move(wj));
  }
  j["scratch_bytes"] = layer.plan.scratch_bytes;
  return j;
}

Json layer_to_json(const EngineLayer& l, BlobWriter& blob) {
  Json j = Json::object();
  j["name"] = l.name;
  j["op"] = l.op;
  if (!l.nodes.empty()) j["nodes"] = l.nodes;
  j["tactic"] = l.tactic;
  j["precision"] = precision_name(l.precision);
  j["signature"] = l.signature;
  j["inputs"] = l.inputs;
  j["outputs"] = l.outputs;
  j["scratch_slots"] = l.scratch_slots;
  if (l.is_branch()) {
    j["branch_layers"] = l.branch_layers;
    j["branch_dispatches"] = l.branch_dispatches;
    if (!l.branch_errors.empty()) j["branch_errors"] = l.branch_errors;
    if (l.is_loop()) j["loop_trip_count"] = l.loop_trip_count;
  }
  j["plan"] = plan_to_json(l, blob);
  return j;
}

Json tensor_to_json(const EngineTensor& t) {
  Json j = Json::object();
  j["name"] = t.name;
  j["dtype"] = dtype_name(t.dtype);
  j["shape"] = t.shape;
  j["storage"] = storage_type_name(t.storage);
  j["slot"] = t.slot;
  if (t.view_of >= 0) {
    j["view_of"] = t.view_of;
    j["offset"] = t.offset;
  }
  return j;
}

// ---- reading ----

// Reads the metadata of one file against its blob; every failure names the
// file and the JSON path of the value.
class MetadataReader {
 public:
  MetadataReader(std::string_view blob, const std::string& file) : blob_(blob), file_(file) {}

  Engine engine(const Json& root) {
    const JsonPlace where{file_, ""};
    if (!root.is_object()) where.fail(std::string("metadata: expected a JSON object, got ") + root.type_name());
    Engine e;
    e.vkgraphy_version = json_string(root, "vkgraphy_version", where);
    e.device = device_identity_from_json(json_member(root, "device", where), file_, "device");
    e.model_name = json_string(root, "model_name", where);
    const JsonPlace tensors_where = where.field("tensors");
    const Json& tensors = array(root, "tensors", where);
    std::set<std::string> names;
    for (size_t i = 0; i < tensors.size(); ++i) {
      e.tensors.push_back(tensor(tensors[i], tensors_where.index(i)));
      if (!names.insert(e.tensors.back().name).second)
        tensors_where.index(i).field("name").fail("tensor '" + e.tensors.back().name + "' appears twice");
    }
    const Json& slots = array(root, "slots", where);
    for (size_t i = 0; i < slots.size(); ++i)
      e.slots.push_back(uint64_t(integer(slots[i], 0, int64_t(kMaxTensorBytes), where.field("slots").index(i))));
    const Json& layers = array(root, "layers", where);
    for (size_t i = 0; i < layers.size(); ++i) e.layers.push_back(layer(layers[i], where.field("layers").index(i)));
    e.inputs = tensor_refs(root, "inputs", where);
    e.outputs = tensor_refs(root, "outputs", where);
    const Json& shaders = array(root, "shaders", where);
    for (size_t i = 0; i < shaders.size(); ++i) shader(shaders[i], where.field("shaders").index(i), e.spirv);
    return e;
  }

 private:
  static const Json& array(const Json& j, const std::string& key, const JsonPlace& where) {
    const Json& v = json_member(j, key, where);
    if (!v.is_array()) where.field(key).fail(std::string("expected an array, got ") + v.type_name());
    return v;
  }

  // An integer value in [min, max].
  static int64_t integer(const Json& v, int64_t min, int64_t max, const JsonPlace& where) {
    std::optional<int64_t> value;
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max())) value = int64_t(v.get<uint64_t>());
    } else if (v.is_number_integer()) {
      value = v.get<int64_t>();
    }
    if (!value || *value < min || *value > max)
      where.fail("expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                 v.dump(-1, ' ', false, Json::error_handler_t::replace));
    return *value;
  }

  static uint32_t u32(const Json& v, const JsonPlace& where) {
    return uint32_t(integer(v, 0, std::numeric_limits<uint32_t>::max(), where));
  }

  static std::vector<int32_t> tensor_refs(const Json& j, const std::string& key, const JsonPlace& where) {
    const Json& list = array(j, key, where);
    std::vector<int32_t> refs;
    for (size_t i = 0; i < list.size(); ++i)
      refs.push_back(int32_t(integer(list[i], -1, std::numeric_limits<int32_t>::max(), where.field(key).index(i))));
    return refs;
  }

  // The "shape" of `j`; sets `bytes` to its size in elements of `element_bytes`,
  // which must stay below kMaxTensorBytes.
  static Shape shape(const Json& j, size_t element_bytes, const JsonPlace& where, uint64_t& bytes) {
    const Json& dims = array(j, "shape", where);
    Shape s;
    bytes = element_bytes;
    for (size_t i = 0; i < dims.size(); ++i)
      s.push_back(integer(dims[i], 0, int64_t(kMaxTensorBytes), where.field("shape").index(i)));
    for (int64_t d : s) {
      if (bytes != 0 && uint64_t(d) > kMaxTensorBytes / bytes)
        where.field("shape").fail("tensor of absurd size " + shape_to_string(s));
      bytes *= uint64_t(d);
    }
    return s;
  }

  static DType dtype(const Json& j, const JsonPlace& where) {
    const std::string text = json_string(j, "dtype", where);
    const std::optional<DType> d = dtype_from_name(text);
    if (!d || text != dtype_name(*d)) where.field("dtype").fail("unknown dtype \"" + text + "\"");
    return *d;
  }

  static EngineTensor tensor(const Json& j, const JsonPlace& where) {
    EngineTensor t;
    t.name = json_string(j, "name", where);
    if (t.name.empty()) where.field("name").fail("empty tensor name");
    t.dtype = dtype(j, where);
    const std::string storage = json_string(j, "storage", where);
    const std::optional<StorageType> s = parse_storage_type(storage);
    if (!s) where.field("storage").fail("unknown storage \"" + storage + "\" (expected \"f32\", \"f16\" or \"i32\")");
    if (storage_for(t.dtype, Precision::FP32) != s && storage_for(t.dtype, Precision::FP16) != s)
      where.field("storage").fail(std::string("a tensor of dtype ") + dtype_name(t.dtype) + " cannot be stored as " +
                                  storage);
    t.storage = *s;
    uint64_t bytes = 0;
    t.shape = shape(j, storage_element_bytes(t.storage), where, bytes);
    t.slot =
        int32_t(integer(json_member(j, "slot", where), 0, std::numeric_limits<int32_t>::max(), where.field("slot")));
    if (j.contains("view_of")) {
      t.view_of = int32_t(integer(j["view_of"], 0, std::numeric_limits<int32_t>::max(), where.field("view_of")));
      t.offset = json_unsigned(j, "offset", kMaxTensorBytes, where);
    }
    return t;
  }

  Tensor weight(const Json& j, const JsonPlace& where) const {
    const DType d = dtype(j, where);
    if (d != DType::Float32 && d != DType::Float16 && d != DType::Int32)
      where.field("dtype").fail(std::string("a weight of dtype ") + dtype_name(d) +
                                " (expected float32, float16 or int32)");
    uint64_t expected = 0;
    Shape s = shape(j, dtype_size(d), where, expected);
    const uint64_t offset = json_unsigned(j, "offset", std::numeric_limits<uint64_t>::max(), where);
    const uint64_t bytes = json_unsigned(j, "bytes", std::numeric_limits<uint64_t>::max(), where);
    if (bytes != expected)
      where.field("bytes").fail(std::to_string(bytes) + " bytes, but " + dtype_name(d) + shape_to_string(s) +
                                " takes " + std::to_string(expected));
    check_region(offset, bytes, where);
    Tensor t(d, std::move(s));
    if (bytes) std::memcpy(t.raw(), blob_.data() + offset, bytes);
    return t;
  }

  void shader(const Json& j, const JsonPlace& where, std::map<std::string, std::vector<uint32_t>>& spirv) const {
    const std::string name = json_string(j, "name", where);
    if (name.empty()) where.field("name").fail("empty shader name");
    if (spirv.count(name)) where.field("name").fail("shader '" + name + "' appears twice");
    const uint64_t offset = json_unsigned(j, "offset", std::numeric_limits<uint64_t>::max(), where);
    const uint64_t words = json_unsigned(j, "words", blob_.size() / 4, where);
    if (words < kSpirvHeaderWords)
      where.field("words").fail("shader '" + name + "' has " + std::to_string(words) +
                                " words, less than a SPIR-V header");
    check_region(offset, words * 4, where);
    std::vector<uint32_t> code(words);
    std::memcpy(code.data(), blob_.data() + offset, words * 4);
    if (code[0] != kSpirvMagic)
      where.fail("shader '" + name + "' is not SPIR-V (magic " + hex(code[0]) + ", expected " + hex(kSpirvMagic) + ")");
    spirv.emplace(name, std::move(code));
  }

  void check_region(uint64_t offset, uint64_t bytes, const JsonPlace& where) const {
    if (offset % kBlobAlignment != 0)
      where.field("offset").fail("offset " + std::to_string(offset) + " is not a multiple of " +
                                 std::to_string(kBlobAlignment));
    if (offset > blob_.size() || bytes > blob_.size() - offset)
      where.fail(std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " run past the end of the " +
                 std::to_string(blob_.size()) + "-byte blob");
  }

  static Dispatch dispatch(const Json& j, const JsonPlace& where) {
    Dispatch d;
    d.shader = json_string(j, "shader", where);
    const Json& spec = array(j, "spec", where);
    for (size_t i = 0; i < spec.size(); ++i) {
      const JsonPlace at = where.field("spec").index(i);
      if (!spec[i].is_array() || spec[i].size() != 2) at.fail("expected [constant_id, value]");
      d.spec.push_back({u32(spec[i][0], at.index(0)), u32(spec[i][1], at.index(1))});
    }
    const Json& bindings = array(j, "bindings", where);
    for (size_t i = 0; i < bindings.size(); ++i) {
      const JsonPlace at = where.field("bindings").index(i);
      if (!bindings[i].is_array() || bindings[i].size() != 2 || !bindings[i][0].is_string())
        at.fail("expected [kind, index]");
      d.bindings.push_back(
          {binding_kind(bindings[i][0].get<std::string>(), at.index(0)), u32(bindings[i][1], at.index(1))});
    }
    const Json& push = array(j, "push", where);
    for (size_t i = 0; i < push.size(); ++i) d.push.push_back(u32(push[i], where.field("push").index(i)));
    const Json& groups = array(j, "groups", where);
    if (groups.size() != 3) where.field("groups").fail("expected 3 group counts, got " + std::to_string(groups.size()));
    for (size_t i = 0; i < 3; ++i) d.groups[i] = u32(groups[i], where.field("groups").index(i));
    if (j.contains("subgroup_size")) d.subgroup_size = u32(j["subgroup_size"], where.field("subgroup_size"));
    return d;
  }

  static BindingRef::Kind binding_kind(const std::string& text, const JsonPlace& where) {
    for (BindingRef::Kind k :
         {BindingRef::Kind::Input, BindingRef::Kind::Output, BindingRef::Kind::Weight, BindingRef::Kind::Scratch}) {
      if (text == binding_kind_name(k)) return k;
    }
    where.fail("unknown binding kind \"" + text + "\" (expected input, output, weight or scratch)");
  }

  EngineLayer layer(const Json& j, const JsonPlace& where) const {
    EngineLayer l;
    l.name = json_string(j, "name", where);
    l.op = json_string(j, "op", where);
    l.nodes = json_optional_strings(j, "nodes", where);
    l.tactic = json_string(j, "tactic", where);
    l.precision = json_precision(j, "precision", where);
    l.signature = json_string(j, "signature", where);
    l.inputs = tensor_refs(j, "inputs", where);
    l.outputs = tensor_refs(j, "outputs", where);
    l.scratch_slots = tensor_refs(j, "scratch_slots", where);
    for (const char* key : {"branch_layers", "branch_dispatches"}) {
      if (!j.contains(key)) continue;
      const Json& counts = array(j, key, where);
      auto& into = std::string_view(key) == "branch_layers" ? l.branch_layers : l.branch_dispatches;
      for (size_t i = 0; i < counts.size(); ++i) into.push_back(u32(counts[i], where.field(key).index(i)));
    }
    l.branch_errors = json_optional_strings(j, "branch_errors", where);
    if (j.contains("loop_trip_count"))
      l.loop_trip_count = integer(j["loop_trip_count"], -1, std::numeric_limits<int64_t>::max(),
                                  where.field("loop_trip_count"));
    const Json& plan = json_member(j, "plan", where);
    const JsonPlace plan_where = where.field("plan");
    const Json& dispatches = array(plan, "dispatches", plan_where);
    for (size_t i = 0; i < dispatches.size(); ++i)
      l.plan.dispatches.push_back(dispatch(dispatches[i], plan_where.field("dispatches").index(i)));
    const Json& weights = array(plan, "weights", plan_where);
    for (size_t i = 0; i < weights.size(); ++i)
      l.plan.weights.push_back(weight(weights[i], plan_where.field("weights").index(i)));
    const Json& scratch = array(plan, "scratch_bytes", plan_where);
    for (size_t i = 0; i < scratch.size(); ++i)
      l.plan.scratch_bytes.push_back(
          uint64_t(integer(scratch[i], 0, int64_t(kMaxTensorBytes), plan_where.field("scratch_bytes").index(i))));
    return l;
  }

  std::string_view blob_;
  const std::string& file_;
};

}  // namespace

std::string serialize_engine(const Engine& engine) {
  BlobWriter blob;
  Json root = Json::object();
  root["vkgraphy_version"] = engine.vkgraphy_version;
  root["device"] = device_identity_to_json(engine.device);
  root["model_name"] = engine.model_name;
  root["tensors"] = Json::array();
  for (const EngineTensor& t : engine.tensors) root["tensors"].push_back(tensor_to_json(t));
  root["slots"] = engine.slots;
  root["layers"] = Json::array();
  for (const EngineLayer& l : engine.layers) root["layers"].push_back(layer_to_json(l, blob));
  root["inputs"] = engine.inputs;
  root["outputs"] = engine.outputs;
  root["shaders"] = Json::array();
  for (const auto& [name, words] : engine.spirv) {
    Json j = Json::object();
    j["name"] = name;
    j["offset"] = blob.add(words.data(), words.size() * sizeof(uint32_t));
    j["words"] = words.size();
    root["shaders"].push_back(std::move(j));
  }

  std::string metadata;
  try {
    metadata = root.dump();
  } catch (const nlohmann::json::exception& e) {
    VKG_THROW("cannot store the engine: a name is not valid UTF-8 (" << e.what() << ")");
  }
  // Trailing spaces (still valid JSON) put the blob at a 16-byte aligned file offset.
  while ((kHeaderBytes + metadata.size() + kLengthBytes) % kBlobAlignment != 0) metadata += ' ';

  std::string out;
  out.reserve(kHeaderBytes + metadata.size() + 2 * kLengthBytes + blob.bytes().size());
  out.append(kEngineMagic, sizeof kEngineMagic);
  put_u32(out, Engine::kFormatVersion);
  put_u32(out, 0);  // flags: none defined
  put_u64(out, metadata.size());
  out += metadata;
  put_u64(out, blob.bytes().size());
  out += blob.bytes();
  put_u64(out, fnv1a64(out));
  return out;
}

Engine deserialize_engine(std::string_view bytes, const std::string& what) {
  const size_t size = bytes.size();
  auto fail = [&](const std::string& problem) { VKG_THROW("'" << what << "': " << problem); };
  auto truncated = [&](const std::string& detail) {
    fail("truncated engine file (" + std::to_string(size) + " bytes): " + detail);
  };
  const std::string_view magic(kEngineMagic, sizeof kEngineMagic);
  if (size == 0) fail("not a vkgraphy engine: the file is empty");
  if (size < magic.size()) {
    if (magic.substr(0, size) == bytes) truncated("it ends inside the header");
    fail("not a vkgraphy engine (wrong magic bytes)");
  }
  if (bytes.substr(0, magic.size()) != magic) fail("not a vkgraphy engine (wrong magic bytes)");
  if (size < kHeaderBytes) truncated("it ends inside the header");
  const uint32_t version = uint32_t(get_le(bytes, 8, 4));
  if (version < Engine::kOldestFormatVersion || version > Engine::kFormatVersion)
    fail("engine format version " + std::to_string(version) + ", but this vkgraphy (" VKGRAPHY_VERSION
         ") reads versions " + std::to_string(Engine::kOldestFormatVersion) + " to " +
         std::to_string(Engine::kFormatVersion) + "; rebuild the engine");
  const uint32_t flags = uint32_t(get_le(bytes, 12, 4));
  if (flags != 0) fail("unknown header flags " + hex(flags) + " (this vkgraphy knows none)");

  size_t left = size - kHeaderBytes;
  const uint64_t metadata_bytes = get_le(bytes, 16, 8);
  if (metadata_bytes > left || left - metadata_bytes < kLengthBytes)
    truncated("the header announces " + std::to_string(metadata_bytes) + " bytes of metadata");
  left -= size_t(metadata_bytes) + kLengthBytes;
  const size_t blob_at = kHeaderBytes + size_t(metadata_bytes) + kLengthBytes;
  const uint64_t blob_bytes = get_le(bytes, blob_at - kLengthBytes, 8);
  if (blob_bytes > left || left - blob_bytes < kLengthBytes)
    truncated("the engine announces a blob of " + std::to_string(blob_bytes) + " bytes and a checksum after it");
  left -= size_t(blob_bytes) + kLengthBytes;
  if (left != 0) fail("corrupt engine file: " + std::to_string(left) + " unexpected bytes after the checksum");

  const uint64_t stored = get_le(bytes, size - kLengthBytes, 8);
  const uint64_t computed = fnv1a64(bytes.substr(0, size - kLengthBytes));
  if (stored != computed)
    fail("checksum mismatch (stored " + hex(stored) + ", computed " + hex(computed) + "): the engine file is corrupt");

  const std::string_view metadata = bytes.substr(kHeaderBytes, size_t(metadata_bytes));
  const std::string_view blob = bytes.substr(blob_at, size_t(blob_bytes));
  Json root;
  try {
    root = Json::parse(metadata.begin(), metadata.end());
  } catch (const nlohmann::json::exception& e) {
    fail("corrupt metadata: " + single_line(e.what(), /*ascii_only=*/true));
  }
  // Messages quote names from the file, which may hold any character.
  Engine engine;
  try {
    engine = MetadataReader(blob, what).engine(root);
    validate_engine(engine, "'" + what + "'");
  } catch (const nlohmann::json::exception& e) {
    fail("corrupt metadata: " + single_line(e.what(), /*ascii_only=*/true));
  } catch (const Error& e) {
    throw Error(single_line(e.what(), /*ascii_only=*/false));
  }
  return engine;
}

void save_engine(const std::string& path, const Engine& engine) {
  write_file_atomically(path, serialize_engine(engine), kEngineWhat);
}

Engine load_engine(const std::string& path) { return deserialize_engine(read_whole_file(path, kEngineWhat), path); }

bool looks_like_engine(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    char head[sizeof kEngineMagic] = {};
    in.read(head, sizeof head);
    return in.gcount() == std::streamsize(sizeof head) && std::memcmp(head, kEngineMagic, sizeof head) == 0;
  } catch (...) {
    return false;
  }
}

}  // namespace vkg
