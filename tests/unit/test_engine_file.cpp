// The engine file (runtime/engine/engine_file.h): round trips, and every kind
// of truncated or corrupt file fails with one clear Error, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/hash.h"
#include "runtime/engine/engine_file.h"
#include "runtime/vulkan/shader_table.h"
#include "runtime/vulkan/spirv_disassembly.h"
#include "tests/unit/test_data_util.h"

namespace vkg {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A fresh folder per test.
std::vector<uint32_t> add_shader() {
  const std::span<const uint32_t> words = vk::builtin_shader("elementwise/add.f32");
  return {words.begin(), words.end()};
}

Dispatch dispatch(const std::string& shader, std::vector<BindingRef> bindings) {
  Dispatch d;
  d.shader = shader;
  d.bindings = std::move(bindings);
  return d;
}

// Three layers over tensors of every storage type: weights of float32,
// float16 and int32 (one of them empty), several dispatches, scratch memory,
// an omitted input and output, two shaders.
Engine sample_engine() {
  Engine e;
  e.vkgraphy_version = "0.1.0";
  e.device = {"llvmpipe (LLVM 15.0.6, 256 bits)", 0x10005, 0, "Mesa 22.3.6",
              "6d657361322e332e3600000000000000", "0.1.0", ""};
  e.model_name = "sample";
  e.tensors = {
      {"x", DType::Float32, {1, 2, 3, 4}, StorageType::F32, -1},
      {"h", DType::Float32, {2, 3}, StorageType::F16, -1},
      {"idx", DType::Int64, {3}, StorageType::I32, -1},
      {"y", DType::Float16, {1, 2, 3, 4}, StorageType::F32, -1},
      {"mask", DType::Bool, {4}, StorageType::I32, -1},
      {"scalar", DType::BFloat16, {}, StorageType::F16, -1},
  };

  EngineLayer add;
  add.name = "add0";
  add.op = "Add";
  add.tactic = "elementwise.add.f32";
  add.precision = Precision::FP32;
  add.signature = "0123456789abcdef";
  add.inputs = {0, -1};
  add.outputs = {1};
  Dispatch d = dispatch("elementwise/add.f32", {BindingRef::input(0), BindingRef::weight(0), BindingRef::output(0)});
  d.spec = {{0, 64}, {1, 7}, {5, 0xffffffffu}};
  d.push = {24, 0, 0xffffffffu};
  d.groups = {2, 3, 65535};
  d.subgroup_size = 32;
  add.plan.dispatches.push_back(d);
  add.plan.weights.push_back(Tensor::from_vector<float>({2, 3}, {1.5f, -2.f, 0.f, 3.25f, 1e-30f, -0.f}));
  add.plan.weights.push_back(Tensor::from_vector<int32_t>({3}, {7, -1, 2147483647}));
  add.plan.scratch_bytes = {100};
  add.plan.dispatches.push_back(dispatch("elementwise/add.f32", {BindingRef::scratch(0), BindingRef::weight(1)}));

  EngineLayer conv;
  conv.name = "conv";
  conv.op = "Conv";
  conv.tactic = "conv.direct.f16";
  conv.precision = Precision::FP16;
  conv.signature = "fedcba9876543210";
  conv.inputs = {1, 2};
  conv.outputs = {3, -1};
  conv.plan.weights.push_back(Tensor::from_vector<Half>({2, 2}, {Half(1.f), Half(-2.f), Half(0.5f), Half(65504.f)}));
  conv.plan.weights.push_back(Tensor(DType::Float32, {0, 3}));
  conv.plan.weights.push_back(Tensor::from_vector<float>({1}, {42.f}));
  conv.plan.dispatches.push_back(dispatch("custom/other.f16", {BindingRef::input(1), BindingRef::weight(2)}));
  conv.plan.dispatches.push_back(
      dispatch("elementwise/add.f32", {BindingRef::input(0), BindingRef::weight(0), BindingRef::output(0)}));
  conv.plan.scratch_bytes = {0, 4096};

  EngineLayer reformat;
  reformat.name = "y reformat f32->i32";
  reformat.op = "Reformat";
  reformat.tactic = "reformat.copy";
  reformat.inputs = {3};
  reformat.outputs = {4, 5};
  reformat.plan.dispatches.push_back(dispatch("elementwise/add.f32", {BindingRef::input(0), BindingRef::output(1)}));

  e.layers = {add, conv, reformat};
  e.inputs = {0, 2};
  e.outputs = {3, 4, 5};
  e.spirv["elementwise/add.f32"] = add_shader();
  std::vector<uint32_t> other = add_shader();
  other.push_back(0x00010000);  // a distinct module: one more instruction (OpNop)
  e.spirv["custom/other.f16"] = other;
  plan_memory(e);
  validate_engine(e, "sample engine");
  return e;
}

void expect_equal(const Engine& a, const Engine& b) {
  EXPECT_EQ(a.vkgraphy_version, b.vkgraphy_version);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.model_name, b.model_name);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    SCOPED_TRACE("tensor " + a.tensors[i].name);
    EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
    EXPECT_EQ(a.tensors[i].dtype, b.tensors[i].dtype);
    EXPECT_EQ(a.tensors[i].shape, b.tensors[i].shape);
    EXPECT_EQ(a.tensors[i].storage, b.tensors[i].storage);
    EXPECT_EQ(a.tensors[i].slot, b.tensors[i].slot);
    EXPECT_EQ(a.tensors[i].view_of, b.tensors[i].view_of);
    EXPECT_EQ(a.tensors[i].offset, b.tensors[i].offset);
  }
  EXPECT_EQ(a.slots, b.slots);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const EngineLayer &la = a.layers[i], &lb = b.layers[i];
    SCOPED_TRACE("layer " + la.name);
    EXPECT_EQ(la.name, lb.name);
    EXPECT_EQ(la.op, lb.op);
    EXPECT_EQ(la.tactic, lb.tactic);
    EXPECT_EQ(la.precision, lb.precision);
    EXPECT_EQ(la.signature, lb.signature);
    EXPECT_EQ(la.inputs, lb.inputs);
    EXPECT_EQ(la.outputs, lb.outputs);
    EXPECT_EQ(la.scratch_slots, lb.scratch_slots);
    EXPECT_EQ(la.plan.dispatches, lb.plan.dispatches);
    EXPECT_EQ(la.plan.scratch_bytes, lb.plan.scratch_bytes);
    ASSERT_EQ(la.plan.weights.size(), lb.plan.weights.size());
    for (size_t w = 0; w < la.plan.weights.size(); ++w)
      EXPECT_TRUE(la.plan.weights[w].bit_equal(lb.plan.weights[w])) << "weight " << w;
    EXPECT_TRUE(la.plan == lb.plan);
    EXPECT_EQ(la.branch_layers, lb.branch_layers);
    EXPECT_EQ(la.branch_dispatches, lb.branch_dispatches);
    EXPECT_EQ(la.branch_errors, lb.branch_errors);
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.spirv, b.spirv);
}

// ---- helpers that take a file apart and put it back with a valid checksum ----

uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(s[at + size_t(i)])) << (8 * i);
  return v;
}

void set_u64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}

void set_u32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}

// Recomputes the trailing checksum after an edit.
void fix_checksum(std::string& file) {
  set_u64(file, file.size() - 8, fnv1a64(std::string_view(file).substr(0, file.size() - 8)));
}

struct Parts {
  std::string header;  // magic, version, flags (16 bytes)
  Json metadata;
  std::string blob;
};

Parts split(const std::string& file) {
  Parts p;
  p.header = file.substr(0, 16);
  const uint64_t m = get_u64(file, 16);
  p.metadata = Json::parse(file.substr(24, m));
  const uint64_t b = get_u64(file, 24 + m);
  p.blob = file.substr(32 + m, b);
  return p;
}

std::string join(const Parts& p) {
  const std::string meta = p.metadata.dump();
  std::string out = p.header;
  out.resize(24 + meta.size() + 8 + p.blob.size() + 8);
  set_u64(out, 16, meta.size());
  out.replace(24, meta.size(), meta);
  set_u64(out, 24 + meta.size(), p.blob.size());
  out.replace(32 + meta.size(), p.blob.size(), p.blob);
  fix_checksum(out);
  return out;
}

// The Error message of loading `bytes`, or "" when it loads (any other exception fails the test).
std::string load_error(const std::string& bytes, const std::string& what = "bad.engine") {
  try {
    deserialize_engine(bytes, what);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a vkg::Error: " << e.what();
    return e.what();
  }
  return "";
}

// The message of loading `sample_engine()` after `edit` changed its metadata or blob.
std::string edited_error(const std::function<void(Parts&)>& edit) {
  Parts p = split(serialize_engine(sample_engine()));
  edit(p);
  return load_error(join(p));
}

// ---- tests ----

TEST(EngineFile, RoundTripKeepsEveryField) {
  const Engine e = sample_engine();
  const std::string bytes = serialize_engine(e);
  const Engine back = deserialize_engine(bytes, "memory");
  expect_equal(e, back);
  EXPECT_EQ(serialize_engine(back), bytes);  // deterministic
  EXPECT_EQ(back.weight_bytes(), e.weight_bytes());
  EXPECT_EQ(back.activation_bytes(), e.activation_bytes());
}

TEST(EngineFile, SaveAndLoadAFile) {
  const std::string path = test::fresh_test_dir("vkg_engine_file") + "/sub/folder/model.engine";  // folders are created
  const Engine e = sample_engine();
  save_engine(path, e);
  EXPECT_TRUE(looks_like_engine(path));
  expect_equal(e, load_engine(path));
  EXPECT_EQ(read_whole_file(path, "engine"), serialize_engine(e));
}

TEST(EngineFile, EmptyEngineRoundTrips) {
  Engine e;
  e.vkgraphy_version = "0.1.0";
  expect_equal(e, deserialize_engine(serialize_engine(e), "empty"));
}

TEST(EngineFile, LayoutIsAsDocumented) {
  const Engine e = sample_engine();
  const std::string bytes = serialize_engine(e);
  EXPECT_EQ(std::memcmp(bytes.data(), "VKGENGN\0", 8), 0);
  EXPECT_EQ(uint8_t(bytes[8]), Engine::kFormatVersion);
  EXPECT_EQ(bytes.substr(9, 7), std::string(7, '\0'));  // rest of the version, flags
  const uint64_t m = get_u64(bytes, 16);
  const uint64_t b = get_u64(bytes, 24 + m);
  EXPECT_EQ((32 + m) % 16, 0u) << "the blob starts 16-byte aligned";
  EXPECT_EQ(bytes.size(), 32 + m + b + 8);
  EXPECT_EQ(get_u64(bytes, bytes.size() - 8), fnv1a64(std::string_view(bytes).substr(0, bytes.size() - 8)));

  const Parts p = split(bytes);
  const Json& meta = p.metadata;
  EXPECT_EQ(meta["vkgraphy_version"], "0.1.0");
  EXPECT_EQ(meta["device"]["name"], e.device.device_name);
  EXPECT_EQ(meta["model_name"], "sample");
  EXPECT_EQ(meta["tensors"][1], Json::parse(R"({"name":"h","dtype":"float32","shape":[2,3],"storage":"f16","slot":)" +
                                            std::to_string(e.tensors[1].slot) + "}"));
  const Json& d = meta["layers"][0]["plan"]["dispatches"][0];
  EXPECT_EQ(d["spec"], Json::parse("[[0,64],[1,7],[5,4294967295]]"));
  EXPECT_EQ(d["bindings"], Json::parse(R"([["input",0],["weight",0],["output",0]])"));
  EXPECT_EQ(d["groups"], Json::parse("[2,3,65535]"));
  // Every weight and shader lies in the blob at a 16-byte aligned offset, with its bytes.
  for (const Json& layer : meta["layers"]) {
    for (const Json& w : layer["plan"]["weights"]) {
      EXPECT_EQ(w["offset"].get<uint64_t>() % 16, 0u);
      EXPECT_LE(w["offset"].get<uint64_t>() + w["bytes"].get<uint64_t>(), p.blob.size());
    }
  }
  const Json& w0 = meta["layers"][0]["plan"]["weights"][0];
  EXPECT_EQ(w0["bytes"], 24);
  EXPECT_EQ(p.blob.substr(w0["offset"].get<size_t>(), 24),
            std::string(reinterpret_cast<const char*>(e.layers[0].plan.weights[0].raw()), 24));
  ASSERT_EQ(meta["shaders"].size(), 2u);
  for (const Json& s : meta["shaders"]) {
    EXPECT_EQ(s["offset"].get<uint64_t>() % 16, 0u);
    uint32_t magic = 0;
    std::memcpy(&magic, p.blob.data() + s["offset"].get<size_t>(), 4);
    EXPECT_EQ(magic, 0x07230203u);
    EXPECT_EQ(s["words"].get<size_t>(), e.spirv.at(s["name"].get<std::string>()).size());
  }
}

TEST(EngineFile, TruncatedAnywhereIsAClearError) {
  const std::string bytes = serialize_engine(sample_engine());
  for (int i = 0; i < 50; ++i) {
    const size_t size = bytes.size() * size_t(i) / 50;
    const std::string message = load_error(bytes.substr(0, size), "cut.engine");
    SCOPED_TRACE("cut at " + std::to_string(size) + " of " + std::to_string(bytes.size()));
    EXPECT_EQ(message.rfind("'cut.engine': ", 0), 0u) << message;
    if (size > 0) {
      EXPECT_NE(message.find("truncated engine file"), std::string::npos) << message;
    }
  }
  EXPECT_NE(load_error(bytes.substr(0, bytes.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(load_error("").find("not a vkgraphy engine"), std::string::npos);
}

TEST(EngineFile, TruncatedFileNamesThePath) {
  const std::string path = test::fresh_test_dir("vkg_engine_file") + "/cut.engine";
  const std::string bytes = serialize_engine(sample_engine());
  write_file_atomically(path, bytes.substr(0, bytes.size() / 2), "test");
  EXPECT_TRUE(looks_like_engine(path));
  try {
    load_engine(path);
    FAIL() << "a truncated engine loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("'" + path + "': truncated engine file", 0), 0u) << e.what();
  }
}

// Random byte changes: each file either loads (a changed weight value, say) or
// fails with vkg::Error. Half of them get a valid checksum, so that the
// metadata and blob checks behind it see the damage.
TEST(EngineFile, RandomMutationsLoadOrFailCleanly) {
  const std::string bytes = serialize_engine(sample_engine());
  const size_t meta_end = 24 + get_u64(bytes, 16);
  std::mt19937_64 rng(20240607);
  int loaded = 0, failed = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string file = bytes;
    const bool fix = trial % 2 == 1;
    const int changes = 1 + int(rng() % 3);
    for (int c = 0; c < changes; ++c) {
      // Checked runs aim most changes at the metadata, where the parser is.
      const size_t at = fix && rng() % 4 != 0 ? rng() % meta_end : rng() % (file.size() - 8);
      const uint8_t value = uint8_t(rng() % 3 == 0 ? std::string("0123456789[]{}\",:-e")[rng() % 19] : rng());
      file[at] = char(value);
    }
    if (fix) fix_checksum(file);
    const std::string message = load_error(file);
    if (message.empty()) {
      ++loaded;
    } else {
      ++failed;
      EXPECT_EQ(message.rfind("'bad.engine': ", 0), 0u) << message;
      for (const char c : message) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "not one printable line: " << message;
    }
  }
  EXPECT_GT(failed, 300);
  EXPECT_GT(loaded, 0);  // some changes hit weight values only
}

TEST(EngineFile, WrongMagicIsNotAnEngine) {
  const std::string dir = test::fresh_test_dir("vkg_engine_file");
  std::string bytes = serialize_engine(sample_engine());
  bytes[3] = 'X';
  EXPECT_EQ(load_error(bytes, "m.onnx"), "'m.onnx': not a vkgraphy engine (wrong magic bytes)");
  EXPECT_NE(load_error("\x08\x07\x12\x0b").find("not a vkgraphy engine"), std::string::npos);
  EXPECT_NE(load_error("VKGE").find("truncated"), std::string::npos);  // a prefix of the magic

  write_file_atomically(dir + "/model.onnx", bytes, "test");
  EXPECT_FALSE(looks_like_engine(dir + "/model.onnx"));
  EXPECT_THROW(load_engine(dir + "/model.onnx"), Error);
  write_file_atomically(dir + "/short", "VKGENGN", "test");
  EXPECT_FALSE(looks_like_engine(dir + "/short"));
  EXPECT_FALSE(looks_like_engine(dir + "/missing.engine"));
  EXPECT_FALSE(looks_like_engine(dir));
  EXPECT_THROW(load_engine(dir + "/missing.engine"), Error);
}

TEST(EngineFile, OtherFormatVersionSaysWhich) {
  std::string bytes = serialize_engine(sample_engine());
  set_u32(bytes, 8, 7);
  const std::string message = load_error(bytes, "new.engine");
  EXPECT_NE(message.find("'new.engine': engine format version 7"), std::string::npos) << message;
  EXPECT_NE(message.find("reads versions " + std::to_string(Engine::kOldestFormatVersion) + " to " +
                         std::to_string(Engine::kFormatVersion)),
            std::string::npos)
      << message;
  fix_checksum(bytes);  // the version is checked first, whatever follows
  EXPECT_EQ(load_error(bytes, "new.engine"), message);
}

// y = cond ? a(x) : b(x), the else branch holding a nested If whose then branch
// could not be built: layers [a] [b, (nested: [] [c]), nested-if] if.
Engine branching_engine() {
  Engine e;
  e.vkgraphy_version = "0.1.0";
  e.model_name = "branches";
  e.tensors = {{"x", DType::Float32, {4}, StorageType::F32, -1},   {"cond", DType::Bool, {}, StorageType::I32, -1},
               {"a", DType::Float32, {4}, StorageType::F32, -1},   {"b", DType::Float32, {4}, StorageType::F32, -1},
               {"c", DType::Float32, {4}, StorageType::F32, -1},   {"inner", DType::Float32, {4}, StorageType::F32, -1},
               {"y", DType::Float32, {4}, StorageType::F32, -1}};
  auto unary = [](const std::string& name, int32_t in, int32_t out) {
    EngineLayer l;
    l.name = name;
    l.op = "Relu";
    l.tactic = "elementwise.unary.f32";
    l.inputs = {in};
    l.outputs = {out};
    l.plan.dispatches.push_back(dispatch("elementwise/add.f32", {BindingRef::input(0), BindingRef::output(0)}));
    return l;
  };
  auto branching = [](const std::string& name, std::vector<int32_t> inputs, int32_t out, std::vector<uint32_t> layers,
                      std::vector<uint32_t> dispatches, std::vector<std::string> errors) {
    EngineLayer l;
    l.name = name;
    l.op = "If";
    l.tactic = "control.if";
    l.inputs = std::move(inputs);
    l.outputs = {out};
    for (uint32_t b = 0; b < 2; ++b)
      for (uint32_t d = 0; d < dispatches[b]; ++d)
        l.plan.dispatches.push_back(
            dispatch("elementwise/add.f32", {BindingRef::input(1 + b), BindingRef::output(0)}));
    l.branch_layers = std::move(layers);
    l.branch_dispatches = std::move(dispatches);
    l.branch_errors = std::move(errors);
    return l;
  };
  e.layers = {unary("a", 0, 2), unary("b", 0, 3), unary("c", 3, 4),
              branching("nested", {1, -1, 4}, 5, {0, 1}, {0, 1}, {"the then branch of If 'nested' cannot run", ""}),
              branching("pick", {1, 2, 5}, 6, {1, 3}, {1, 1}, {})};
  e.inputs = {0, 1};
  e.outputs = {6};
  e.spirv["elementwise/add.f32"] = add_shader();
  plan_memory(e);
  validate_engine(e, "branching engine");
  return e;
}

TEST(EngineFile, BranchingLayersRoundTrip) {
  const Engine e = branching_engine();
  const Engine loaded = deserialize_engine(serialize_engine(e), "branches.engine");
  expect_equal(e, loaded);
  const LayerBlock blocks = layer_blocks(loaded, "branches.engine");
  ASSERT_EQ(blocks.items.size(), 1u);  // everything is inside 'pick'
  const LayerBlock::Item& pick = blocks.items[0];
  EXPECT_EQ(pick.layer, 4u);
  ASSERT_EQ(pick.branches.size(), 2u);
  ASSERT_EQ(pick.branches[0].items.size(), 1u);
  EXPECT_EQ(pick.branches[0].items[0].layer, 0u);
  ASSERT_EQ(pick.branches[1].items.size(), 2u);  // b, then nested (holding c)
  EXPECT_EQ(pick.branches[1].items[0].layer, 1u);
  const LayerBlock::Item& nested = pick.branches[1].items[1];
  EXPECT_EQ(nested.layer, 3u);
  EXPECT_TRUE(nested.branches[0].items.empty());
  ASSERT_EQ(nested.branches[1].items.size(), 1u);
  EXPECT_EQ(nested.branches[1].items[0].layer, 2u);
  // A tensor read only inside a branch stays alive until the branching layer reads the results.
  EXPECT_NE(loaded.tensors[2].slot, loaded.tensors[3].slot);
}

// An eliminated Concat: 'left' and 'right' (written by two layers) are the halves of 'cat',
// which 'neg' reads.
Engine concat_view_engine() {
  Engine e;
  e.vkgraphy_version = "0.1.0";
  for (const char* name : {"x", "left", "right", "cat", "y"}) {
    EngineTensor t;
    t.name = name;
    t.shape = std::string(name) == "cat" ? Shape{1, 16, 4} : Shape{1, 8, 4};
    e.tensors.push_back(t);
  }
  e.tensors[1].view_of = 3;
  e.tensors[2].view_of = 3;
  e.tensors[2].offset = 128;
  const char* names[] = {"relu", "sigmoid", "neg"};
  const std::vector<std::pair<int32_t, int32_t>> io = {{0, 1}, {0, 2}, {3, 4}};
  for (size_t i = 0; i < io.size(); ++i) {
    EngineLayer l;
    l.name = names[i];
    l.op = "Relu";
    l.tactic = "unary.vec4.f32";
    l.signature = "0123456789abcdef";
    l.inputs = {io[i].first};
    l.outputs = {io[i].second};
    l.plan.dispatches.push_back(dispatch("elementwise/add.f32", {BindingRef::input(0), BindingRef::output(0)}));
    e.layers.push_back(l);
  }
  e.inputs = {0};
  e.outputs = {4};
  e.spirv["elementwise/add.f32"] = add_shader();
  plan_memory(e);
  validate_engine(e, "concat view engine");
  return e;
}

TEST(EngineFile, ConcatViewsShareTheirTensorsSlotAndRoundTrip) {
  const Engine e = concat_view_engine();
  EXPECT_EQ(e.tensors[1].slot, e.tensors[3].slot);
  EXPECT_EQ(e.tensors[2].slot, e.tensors[3].slot);
  EXPECT_EQ(e.memory_root(2), 3);
  EXPECT_EQ(e.slot_offset(1), 0u);
  EXPECT_EQ(e.slot_offset(2), 128u);
  EXPECT_EQ(e.slots[size_t(e.tensors[3].slot)], 256u);  // the whole of 'cat', taken when 'left' is written
  EXPECT_NE(e.tensors[3].slot, e.tensors[4].slot);
  expect_equal(e, deserialize_engine(serialize_engine(e), "views.engine"));
  // A view outside its tensor, of itself, or in a cycle is an error naming it.
  for (const auto& [edit, expected] : std::vector<std::pair<std::function<void(Engine&)>, std::string>>{
           {[](Engine& v) { v.tensors[2].offset = 160; }, "tensor 'right' (128 bytes at 160) is not a part of"},
           {[](Engine& v) { v.tensors[2].view_of = 2; }, "tensor 'right' is a view of tensor 2 of 5"},
           {[](Engine& v) {
              v.tensors[3].view_of = 1;
              v.tensors[3].shape = {1, 8, 4};
              v.tensors[1].shape = {1, 8, 4};
            },
            "form a cycle"},
       }) {
    Engine bad = concat_view_engine();
    edit(bad);
    try {
      validate_engine(bad, "bad.engine");
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(expected), std::string::npos) << err.what();
    }
  }
}

TEST(EngineFile, VersionOneFilesStillLoad) {
  std::string bytes = serialize_engine(sample_engine());
  EXPECT_EQ(uint8_t(bytes[8]), Engine::kFormatVersion);
  set_u32(bytes, 8, Engine::kOldestFormatVersion);
  fix_checksum(bytes);
  expect_equal(sample_engine(), deserialize_engine(bytes, "old.engine"));
}

TEST(EngineFile, BranchCountsAreChecked) {
  Engine e = branching_engine();
  e.layers[4].branch_layers = {1, 4};  // reaches before the first layer
  EXPECT_THROW(
      {
        try {
          validate_engine(e, "e");
        } catch (const Error& err) {
          EXPECT_NE(std::string(err.what()).find("the branches of layer 'pick' (1 + 4 layers) reach outside its block"),
                    std::string::npos)
              << err.what();
          throw;
        }
      },
      Error);
  e = branching_engine();
  e.layers[3].branch_layers = {0, 3};  // more layers than the enclosing else branch holds before it
  EXPECT_THROW(validate_engine(e, "e"), Error);
  e = branching_engine();
  e.layers[3].branch_errors = {"failed", "failed too"};  // an error for a branch that has layers
  EXPECT_THROW(validate_engine(e, "e"), Error);
  e = branching_engine();
  e.layers[4].branch_dispatches = {2, 1};  // more than the layer has
  EXPECT_THROW(validate_engine(e, "e"), Error);
  e = branching_engine();
  e.layers[1].branch_dispatches = {1, 0};  // branch data on a plain layer
  EXPECT_THROW(validate_engine(e, "e"), Error);
}

TEST(EngineFile, UnknownFlagsAreAnError) {
  std::string bytes = serialize_engine(sample_engine());
  set_u32(bytes, 12, 1);
  fix_checksum(bytes);
  EXPECT_NE(load_error(bytes).find("unknown header flags 0x1"), std::string::npos);
}

TEST(EngineFile, ChecksumMismatch) {
  const std::string good = serialize_engine(sample_engine());
  std::string bytes = good;
  bytes[bytes.size() - 20] ^= 0x40;  // a byte of the last shader
  EXPECT_NE(load_error(bytes).find("'bad.engine': checksum mismatch"), std::string::npos) << load_error(bytes);
  bytes = good;
  bytes[bytes.size() - 1] ^= 1;  // the checksum itself
  EXPECT_NE(load_error(bytes).find("checksum mismatch"), std::string::npos);
  bytes = good;
  bytes[30] = bytes[30] == 'a' ? 'b' : 'a';  // the metadata
  EXPECT_NE(load_error(bytes).find("checksum mismatch"), std::string::npos);
}

TEST(EngineFile, LengthsMustAddUp) {
  const std::string good = serialize_engine(sample_engine());
  const uint64_t m = get_u64(good, 16);
  std::string bytes = good;
  set_u64(bytes, 16, ~uint64_t(0));  // absurd metadata length: no allocation, a clear error
  EXPECT_NE(load_error(bytes).find("truncated engine file"), std::string::npos);
  bytes = good;
  set_u64(bytes, 24 + m, uint64_t(1) << 62);  // absurd blob length
  EXPECT_NE(load_error(bytes).find("announces a blob of"), std::string::npos);
  bytes = good + std::string(16, '\0');
  EXPECT_NE(load_error(bytes).find("16 unexpected bytes after the checksum"), std::string::npos);
  bytes = good;
  set_u64(bytes, 16, m - 16);  // metadata shorter than written: the rest reads as lengths
  EXPECT_NE(load_error(bytes), "");
}

TEST(EngineFile, CorruptMetadata) {
  // The closing brace of the metadata becomes a comma; the checksum stays valid.
  std::string file = join(split(serialize_engine(sample_engine())));
  file[24 + get_u64(file, 16) - 1] = ',';
  fix_checksum(file);
  EXPECT_NE(load_error(file).find("'bad.engine': corrupt metadata: "), std::string::npos) << load_error(file);

  EXPECT_NE(edited_error([](Parts& p) { p.metadata = Json::array(); }).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata.erase("layers"); }).find("missing key \"layers\""),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["tensors"][2]["storage"] = "f64";
            }).find("tensors[2].storage: unknown storage \"f64\""),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["tensors"][2]["storage"] = "f16";
            }).find("a tensor of dtype int64 cannot be stored as f16"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["tensors"][0]["dtype"] = "fp32"; }).find("unknown dtype \"fp32\""),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["tensors"][0]["shape"][1] = -2; }).find("tensors[0].shape[1]"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["tensors"][0]["shape"] = Json::array({1u << 30, 1u << 30, 1u << 30});
            }).find("absurd size"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["tensors"][1]["name"] = "x"; }).find("tensor 'x' appears twice"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["layers"][0]["precision"] = "fp8"; }).find("unknown precision"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["layers"][0]["plan"]["dispatches"][0]["bindings"][1][0] = "const";
            }).find("unknown binding kind \"const\""),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["layers"][0]["plan"]["dispatches"][0]["groups"] = Json::array({1, 1});
            }).find("expected 3 group counts"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["layers"][0]["plan"]["dispatches"][0]["spec"][0] = Json::array({1});
            }).find("expected [constant_id, value]"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) {
              p.metadata["layers"][0]["plan"]["dispatches"][0]["push"][0] = 1.5;
            }).find("push[0]: expected an integer"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["layers"][1]["inputs"][0] = 99; }).find("refers to tensor 99"),
            std::string::npos);
  EXPECT_NE(edited_error([](Parts& p) { p.metadata["inputs"][0] = -7; }).find("inputs[0]: expected an integer from -1"),
            std::string::npos);
}

TEST(EngineFile, WeightsMustMatchTheirShapeAndBlob) {
  const std::string w = "layers[0].plan.weights[0]";
  std::string message = edited_error([](Parts& p) { p.metadata["layers"][0]["plan"]["weights"][0]["bytes"] = 20; });
  EXPECT_NE(message.find(w + ".bytes: 20 bytes, but float32[2, 3] takes 24"), std::string::npos) << message;
  message = edited_error([](Parts& p) {
    p.metadata["layers"][0]["plan"]["weights"][0]["shape"] = Json::array({2, 4});
  });
  EXPECT_NE(message.find("float32[2, 4] takes 32"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["layers"][0]["plan"]["weights"][0]["dtype"] = "int64"; });
  EXPECT_NE(message.find("a weight of dtype int64"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["layers"][0]["plan"]["weights"][0]["offset"] = 8; });
  EXPECT_NE(message.find(w + ".offset: offset 8 is not a multiple of 16"), std::string::npos) << message;
  message = edited_error(
      [](Parts& p) { p.metadata["layers"][0]["plan"]["weights"][0]["offset"] = (p.blob.size() + 15) / 16 * 16; });
  EXPECT_NE(message.find("run past the end of the"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["layers"][0]["plan"]["weights"][0]["offset"] = uint64_t(-16); });
  EXPECT_NE(message.find("run past the end of the"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.blob.resize(p.blob.size() - 64); });
  EXPECT_NE(message.find("run past the end of the"), std::string::npos) << message;
}

TEST(EngineFile, ShadersMustBeSpirv) {
  std::string message = edited_error([](Parts& p) {
    const size_t at = p.metadata["shaders"][0]["offset"].get<size_t>();
    p.blob[at] = 0x04;
  });
  EXPECT_NE(message.find("is not SPIR-V (magic 0x7230204, expected 0x7230203)"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["shaders"][0]["words"] = 3; });
  EXPECT_NE(message.find("less than a SPIR-V header"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["shaders"][0]["words"] = uint64_t(1) << 61; });
  EXPECT_NE(message.find("shaders[0].words: expected an integer"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["shaders"][1]["name"] = p.metadata["shaders"][0]["name"]; });
  EXPECT_NE(message.find("appears twice"), std::string::npos) << message;
  message = edited_error([](Parts& p) { p.metadata["shaders"].erase(0); });
  EXPECT_NE(message.find("whose SPIR-V is missing"), std::string::npos) << message;
}

TEST(EngineFile, LoadedEngineIsValidated) {
  const std::string message = edited_error([](Parts& p) {
    p.metadata["layers"][2]["plan"]["dispatches"][0]["bindings"].push_back(Json::array({"weight", 0}));
  });
  EXPECT_NE(message.find("'bad.engine': layer 'y reformat f32->i32' binds weight 0, which it does not have"),
            std::string::npos)
      << message;
}

TEST(EngineFile, ErrorsAreOneLine) {
  const std::string message = edited_error([](Parts& p) {
    // A duplicate tensor name holding a newline and a tab.
    p.metadata["tensors"][0]["name"] = "a\nb\tc";
    p.metadata["tensors"][1]["name"] = "a\nb\tc";
  });
  EXPECT_NE(message.find("tensor 'a?b?c' appears twice"), std::string::npos) << message;
}

TEST(EngineFile, UnstorableEngines) {
  Engine e = sample_engine();
  e.layers[0].plan.weights[0] = Tensor::from_vector<int64_t>({1}, {5});
  EXPECT_THROW(serialize_engine(e), Error);
  e = sample_engine();
  e.model_name = "bad \xff utf-8";
  EXPECT_THROW(serialize_engine(e), Error);
}

TEST(SpirvDisassembly, BuiltinShader) {
  const std::string text = vk::disassemble_spirv(vk::builtin_shader("elementwise/add.f32"));
  EXPECT_NE(text.find("OpEntryPoint GLCompute"), std::string::npos) << text;
  EXPECT_NE(text.find("OpFunctionEnd"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(SpirvDisassembly, GarbageIsAnError) {
  const std::vector<uint32_t> garbage = {0x07230203, 0x00010000, 0, 5, 0, 0xdeadbeef};
  EXPECT_THROW(vk::disassemble_spirv(garbage), Error);
  EXPECT_THROW(vk::disassemble_spirv(std::vector<uint32_t>{}), Error);
}

}  // namespace
}  // namespace vkg
