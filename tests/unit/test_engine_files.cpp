// Layer signatures, tactic replay files (loud) and timing cache files (soft).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/engine/layer_signature.h"
#include "runtime/engine/tactic_replay.h"
#include "runtime/engine/timing_cache.h"
#include "tests/unit/seeded_mutation.h"
#include "tests/unit/test_data_util.h"

namespace vkg {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test.
void write(const std::string& path, const std::string& text) { write_file_atomically(path, text, "test file"); }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

// Runs `f` and returns what it printed (the logger writes to stdout).
std::string printed(const std::function<void()>& f) {
  ::testing::internal::CaptureStdout();
  f();
  return ::testing::internal::GetCapturedStdout();
}

// Silences the logger for the life of the object.
class QuietLogger {
 public:
  QuietLogger() : saved_(Logger::get().severity()) { Logger::get().set_severity(Severity::Critical); }
  ~QuietLogger() { Logger::get().set_severity(saved_); }

 private:
  Severity saved_;
};

DeviceIdentity lavapipe() {
  return {"llvmpipe (LLVM 15.0.6, 256 bits)", 0x10005, 0, "Mesa 22.3.6", "6d657361322e332e3600000000000000", "0.1.0", ""};
}

DeviceIdentity other_gpu() {
  return {"NVIDIA GeForce RTX 4090", 0x10de, 0x2684, "535.104.5", "0123456789abcdef0123456789abcdef", "0.1.0", ""};
}

ValueInfo info(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.dtype = dtype;
  std::vector<Dim> shape;
  for (int64_t d : dims) shape.push_back(Dim{d, ""});
  v.shape = shape;
  return v;
}

Attribute int_attr(int64_t i) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = i;
  return a;
}

Attribute float_attr(float f) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = f;
  return a;
}

Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

Node conv(const std::string& name, const std::string& x, const std::string& y) {
  Node n;
  n.name = name;
  n.op_type = "Conv";
  n.inputs = {x, name + "_w", ""};
  n.outputs = {y};
  n.attrs["strides"] = ints_attr({1, 1});
  n.attrs["group"] = int_attr(1);
  n.attrs["alpha"] = float_attr(0.1f);
  return n;
}

LayerSignature conv_signature(const Node& n, int64_t width = 8, Precision p = Precision::FP32) {
  const std::vector<ValueInfo> in = {info(n.inputs[0], DType::Float32, {1, 3, width, width}),
                                     info(n.inputs[1], DType::Float32, {4, 3, 3, 3}), ValueInfo{}};
  const std::vector<ValueInfo> out = {info(n.outputs[0], DType::Float32, {1, 4, width - 2, width - 2})};
  return make_layer_signature(n, in, out, p);
}

// ---------------------------------------------------------------- signatures

TEST(EngineLayerSignature, CanonicalTextAndStableKey) {
  const LayerSignature s = conv_signature(conv("conv1", "x", "y"));
  EXPECT_EQ(s.canonical_text(),
            "op=Conv attrs={alpha=f:0.1,group=i:1,strides=ints:[1,1]} "
            "in=(float32[1,3,8,8],float32[4,3,3,3],none) out=(float32[1,4,6,6]) precision=fp32");
  // FNV-1a 64 of the text above: the key must not change between runs or platforms.
  EXPECT_EQ(s.key(), "4b3a4cbc93d994d9");
  EXPECT_EQ(s.key().size(), 16u);
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), s.canonical_text());
}

TEST(EngineLayerSignature, IndependentOfNames) {
  const LayerSignature a = conv_signature(conv("conv1", "x", "y"));
  const LayerSignature b = conv_signature(conv("backbone/layer4/conv_77", "t12", "t13"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.key(), b.key());
}

TEST(EngineLayerSignature, IndependentOfAttributeOrder) {
  Node a = conv("a", "x", "y");
  Node b;
  b.name = "b";
  b.op_type = "Conv";
  b.inputs = a.inputs;
  b.outputs = a.outputs;
  b.attrs["alpha"] = float_attr(0.1f);
  b.attrs["strides"] = ints_attr({1, 1});
  b.attrs["group"] = int_attr(1);
  EXPECT_EQ(conv_signature(a).key(), conv_signature(b).key());
}

TEST(EngineLayerSignature, SensitiveToWhatIsComputed) {
  const Node n = conv("c", "x", "y");
  const std::string key = conv_signature(n).key();
  EXPECT_NE(conv_signature(n, 9).key(), key) << "shape";
  EXPECT_NE(conv_signature(n, 8, Precision::FP16).key(), key) << "precision";

  Node other_attr = n;
  other_attr.attrs["group"] = int_attr(2);
  EXPECT_NE(conv_signature(other_attr).key(), key) << "attribute value";

  Node next_float = n;
  next_float.attrs["alpha"] = float_attr(std::nextafter(0.1f, 1.0f));
  EXPECT_NE(conv_signature(next_float).key(), key) << "floats are exact";

  Node other_op = n;
  other_op.op_type = "ConvTranspose";
  EXPECT_NE(conv_signature(other_op).key(), key) << "op";

  const std::vector<ValueInfo> in = {info("x", DType::Float16, {1, 3, 8, 8}), info("w", DType::Float32, {4, 3, 3, 3}),
                                     ValueInfo{}};
  const std::vector<ValueInfo> out = {info("y", DType::Float32, {1, 4, 6, 6})};
  EXPECT_NE(make_layer_signature(n, in, out, Precision::FP32).key(), key) << "dtype";

  Node with_bias = n;
  with_bias.inputs[2] = "bias";
  std::vector<ValueInfo> in_bias = in;
  in_bias[0] = info("x", DType::Float32, {1, 3, 8, 8});
  in_bias[2] = info("bias", DType::Float32, {4});
  EXPECT_NE(make_layer_signature(with_bias, in_bias, out, Precision::FP32).key(), key) << "optional input present";
}

TEST(EngineLayerSignature, UnknownShapesAndStrings) {
  Node n;
  n.name = "pad";
  n.op_type = "Pad";
  Attribute mode;
  mode.kind = Attribute::Kind::String;
  mode.s = "re\"flect\n";
  n.attrs["mode"] = mode;
  n.inputs = {"x"};
  n.outputs = {"y"};
  ValueInfo x;
  x.dtype = DType::Float32;
  x.shape = std::vector<Dim>{Dim{-1, "batch"}, Dim{-1, ""}, Dim{4, ""}};
  const LayerSignature s = make_layer_signature(n, {x}, {ValueInfo{}}, Precision::FP16);
  EXPECT_EQ(s.canonical_text(),
            "op=Pad attrs={mode=s:\"re\\x22flect\\x0a\"} in=(float32[batch,?,4]) out=(?[?]) "
            "precision=fp16");
}

TEST(EngineLayerSignature, CountMismatchNamesTheNode) {
  const Node n = conv("conv1", "x", "y");
  try {
    make_layer_signature(n, {ValueInfo{}}, {ValueInfo{}}, Precision::FP32);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Conv 'conv1'"), std::string::npos) << e.what();
  }
}

TEST(EngineLayerSignature, PrecisionNames) {
  EXPECT_STREQ(precision_name(Precision::FP16), "fp16");
  EXPECT_EQ(parse_precision("fp32"), Precision::FP32);
  EXPECT_EQ(parse_precision("fp16"), Precision::FP16);
  EXPECT_EQ(parse_precision("FP16"), std::nullopt);
  EXPECT_EQ(parse_precision("int8"), std::nullopt);
}

TEST(EngineDeviceIdentity, ComparesAndPrints) {
  EXPECT_EQ(lavapipe(), lavapipe());
  EXPECT_NE(lavapipe(), other_gpu());
  DeviceIdentity newer = lavapipe();
  newer.vkgraphy_version = "0.2.0";
  EXPECT_NE(lavapipe(), newer);
  EXPECT_EQ(lavapipe().describe(),
            "llvmpipe (LLVM 15.0.6, 256 bits) (vendor 0x10005, device 0x0, driver Mesa 22.3.6, vkgraphy 0.1.0)");
}

// Timings measured with device features switched off ran other shader builds: they are another
// device's, in the timing cache and in replays; files without the key are of no switch.
TEST(EngineDeviceIdentity, SwitchedOffFeaturesAreAnotherDevice) {
  DeviceIdentity switched = lavapipe();
  switched.switched_off = "int64,texel-buffers";
  EXPECT_NE(switched, lavapipe());
  EXPECT_EQ(switched.describe(), "llvmpipe (LLVM 15.0.6, 256 bits) (vendor 0x10005, device 0x0, driver Mesa 22.3.6, "
                                 "vkgraphy 0.1.0, switched off: int64,texel-buffers)");
  EXPECT_EQ(device_identity_from_json(device_identity_to_json(switched), "f", "device"), switched);
  EXPECT_FALSE(device_identity_to_json(lavapipe()).contains("switched_off"));
  TimingCache cache;
  cache.record({switched, "00112233aabbccdd", "", "gemm.block16x16.f32", Precision::FP32, 1000, 5, {}, false});
  EXPECT_TRUE(cache.lookup(switched, "00112233aabbccdd", "gemm.block16x16.f32").has_value());
  EXPECT_FALSE(cache.lookup(lavapipe(), "00112233aabbccdd", "gemm.block16x16.f32").has_value());
}

// ---------------------------------------------------------------- tactic replay

TacticReplay sample_replay() {
  TacticReplay r;
  r.device = lavapipe();
  TacticChoice gemm{"fc1", "Gemm", "00112233aabbccdd", "gemm.tile4x4.f32", Precision::FP32, {}, {}};
  gemm.candidates.push_back({"gemm.tile4x4.f32", Precision::FP32, 1500.5, {1500.5, 1400, 1600.25}, std::nullopt});
  gemm.candidates.push_back({"gemm.tile8x8.f16", Precision::FP16, 0, {}, "shader needs shaderFloat16"});
  r.layers.push_back(gemm);
  r.layers.push_back({"relu1", "Relu", "ffeeddccbbaa9988", "eltwise.vec4.f32", Precision::FP32, {}, {}});
  return r;
}

TEST(EngineTacticReplay, RoundTripAndFind) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/replay.json";
  const TacticReplay r = sample_replay();
  save_tactic_replay(path, r);
  const TacticReplay back = load_tactic_replay(path);
  EXPECT_EQ(back, r);
  ASSERT_NE(back.find("relu1"), nullptr);
  EXPECT_EQ(back.find("relu1")->tactic, "eltwise.vec4.f32");
  EXPECT_EQ(back.find("conv9"), nullptr);
  const std::string text = test::read_text(path);
  EXPECT_NE(text.find("\"format\": \"vkgraphy-tactic-replay\""), std::string::npos);
  EXPECT_NE(text.find("\"error\": \"shader needs shaderFloat16\""), std::string::npos);
}

// --validate-tactics records each candidate's error, and rejected candidates
// with the reason; an infinite error (NaN where the reference has a number) is "inf".
TEST(EngineTacticReplay, ValidationErrorsRoundTrip) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/replay.json";
  TacticReplay r = sample_replay();
  r.layers[0].candidates[0].validation_error = 2.5e-7;
  CandidateTiming rejected{"gemm.tile2x2.f32", Precision::FP32, 0, {}, "rejected by validation: ..."};
  rejected.validation_error = 1.75;
  rejected.rejected = true;
  r.layers[0].candidates.push_back(rejected);
  CandidateTiming nan = rejected;
  nan.tactic = "gemm.tile1x1.f32";
  nan.validation_error = std::numeric_limits<double>::infinity();
  r.layers[0].candidates.push_back(nan);
  CandidateTiming untimed{"gemm.tile16x16.f32", Precision::FP32, 0, {}, std::nullopt};
  untimed.validation_error = 3e-8;
  untimed.untimed = true;
  r.layers[1].candidates.push_back(untimed);
  save_tactic_replay(path, r);
  EXPECT_EQ(load_tactic_replay(path), r);
  const std::string text = test::read_text(path);
  EXPECT_NE(text.find("\"validation_error\": \"inf\""), std::string::npos);
  EXPECT_NE(text.find("\"rejected\": true"), std::string::npos);
  // A rejected candidate without its error, or a bad error value, is a clear error.
  std::string broken = text;
  broken.replace(broken.find("\"inf\""), 5, "-1");
  write(path, broken);
  EXPECT_THROW(load_tactic_replay(path), Error);
}

TEST(EngineTacticReplay, SavingDuplicateLayersFails) {
  TacticReplay r = sample_replay();
  r.layers.push_back(r.layers[0]);
  EXPECT_THROW(save_tactic_replay(test::fresh_test_dir("vkg_engine_files") + "/r.json", r), Error);
}

TEST(EngineTacticReplay, LooksLikeReplay) {
  const std::string dir = test::fresh_test_dir("vkg_engine_files");
  save_tactic_replay(dir + "/replay.json", sample_replay());
  EXPECT_TRUE(looks_like_tactic_replay(dir + "/replay.json"));
  // Another version is still a replay (loading it then says why it is unusable).
  write(dir + "/v2.json", replaced(test::read_text(dir + "/replay.json"), "\"version\": 1", "\"version\": 2"));
  EXPECT_TRUE(looks_like_tactic_replay(dir + "/v2.json"));
  write(dir + "/late_format.json", "{\"layers\": [{\"format\": \"x\"}], \"format\": \"vkgraphy-tactic-replay\"}");
  EXPECT_TRUE(looks_like_tactic_replay(dir + "/late_format.json"));

  TimingCache cache;
  save_timing_cache(dir + "/cache.json", cache);
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/cache.json"));
  write(dir + "/garbage.bin", std::string("\x00\xff\x13garbage", 10));
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/garbage.bin"));
  write(dir + "/array.json", "[\"vkgraphy-tactic-replay\"]");
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/array.json"));
  write(dir + "/nested.json", "{\"a\": {\"format\": \"vkgraphy-tactic-replay\"}}");
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/nested.json"));
  write(dir + "/number.json", "{\"format\": 1}");
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/number.json"));
  write(dir + "/empty.json", "");
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/empty.json"));
  EXPECT_FALSE(looks_like_tactic_replay(dir + "/missing.json"));
  EXPECT_FALSE(looks_like_tactic_replay(dir));
}

// Each broken replay and the words its error must contain (besides the file name).
TEST(EngineTacticReplay, LoadFailsLoudly) {
  const std::string dir = test::fresh_test_dir("vkg_engine_files");
  save_tactic_replay(dir + "/good.json", sample_replay());
  const std::string good = test::read_text(dir + "/good.json");
  struct Case {
    std::string name;
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"not_json", "{\"format\": ", "not valid JSON"},
      {"array", "[]", "not a tactic replay: it is a JSON list"},
      {"no_format", "{\"version\": 1}", "not a tactic replay: it has no \"format\" key"},
      {"polygraphy", "{\"lst\": [], \"polygraphy_class\": \"RunResults\"}",
       "not a tactic replay: it is a Polygraphy RunResults file"},
      {"other_format", replaced(good, "vkgraphy-tactic-replay", "vkgraphy-timing-cache"),
       "format: not a tactic replay"},
      {"other_version", replaced(good, "\"version\": 1", "\"version\": 7"),
       "version: unsupported tactic replay version 7"},
      {"no_device", replaced(good, "\"device\"", "\"devices\""), "missing key \"device\""},
      {"bad_vendor", replaced(good, "\"vendor_id\": 65541", "\"vendor_id\": -1"),
       "device.vendor_id: expected an integer"},
      {"no_layers", replaced(good, "\"layers\"", "\"layer\""), "missing key \"layers\""},
      {"layers_object", replaced(good, "\"layers\": [", "\"layers\": {\"x\": 1}, \"y\": ["),
       "layers: expected an array"},
      {"no_tactic", replaced(good, "\"tactic\": \"eltwise.vec4.f32\"", "\"tactc\": \"eltwise.vec4.f32\""),
       "layers[1]: missing key \"tactic\""},
      {"tactic_number", replaced(good, "\"tactic\": \"eltwise.vec4.f32\"", "\"tactic\": 3"),
       "layers[1].tactic: expected a string"},
      {"bad_precision", replaced(good, "\"precision\": \"fp16\"", "\"precision\": \"int8\""),
       "layers[0].candidates[1].precision: unknown precision \"int8\""},
      {"negative_median", replaced(good, "\"median_ns\": 1500.5", "\"median_ns\": -3"),
       "layers[0].candidates[0].median_ns: expected a number >= 0"},
      {"bad_sample", replaced(good, "1400.0", "\"fast\""), "layers[0].candidates[0].samples_ns[1]: expected a number"},
      {"no_samples", replaced(good, "\"samples_ns\"", "\"samples\""),
       "layers[0].candidates[0]: missing key \"samples_ns\""},
      {"error_number", replaced(good, "\"error\": \"shader needs shaderFloat16\"", "\"error\": 5"),
       "layers[0].candidates[1].error: expected a string"},
      {"empty_name", replaced(good, "\"name\": \"relu1\"", "\"name\": \"\""), "layers[1].name: empty layer name"},
      {"duplicate", replaced(good, "\"name\": \"relu1\"", "\"name\": \"fc1\""),
       "layers[1].name: layer 'fc1' appears twice"},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name + ".json";
    write(path, c.text);
    try {
      load_tactic_replay(path);
      ADD_FAILURE() << c.name << ": loaded without an error";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << c.name << ": " << message;
      EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
    }
  }
}

TEST(EngineTacticReplay, MissingFileIsAnError) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/nope.json";
  try {
    load_tactic_replay(path);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tactic replay '" + path + "' does not exist"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- timing cache

TimingEntry entry(const DeviceIdentity& device, const std::string& key, const std::string& tactic, double median) {
  return {device, key, "op=Gemm ...", tactic, Precision::FP32, median, 5};
}

TimingCache sample_cache() {
  TimingCache c;
  c.record(entry(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32", 1500));
  c.record(entry(lavapipe(), "00112233aabbccdd", "gemm.tile8x8.f32", 900.25));
  c.record(entry(other_gpu(), "00112233aabbccdd", "gemm.tile4x4.f32", 12));
  return c;
}

TEST(EngineTimingCache, LookupCountsHitsAndMisses) {
  const TimingCache c = sample_cache();
  EXPECT_EQ(c.size(), 3u);
  const auto hit = c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile8x8.f32");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->median_ns, 900.25);
  EXPECT_EQ(c.lookup(other_gpu(), "00112233aabbccdd", "gemm.tile4x4.f32")->median_ns, 12);
  EXPECT_FALSE(c.lookup(other_gpu(), "00112233aabbccdd", "gemm.tile8x8.f32"));
  EXPECT_FALSE(c.lookup(lavapipe(), "ffffffffffffffff", "gemm.tile4x4.f32"));
  DeviceIdentity newer_driver = lavapipe();
  newer_driver.driver_version = "Mesa 23.0.0";
  EXPECT_FALSE(c.lookup(newer_driver, "00112233aabbccdd", "gemm.tile4x4.f32"));
  EXPECT_EQ(c.hits(), 2u);
  EXPECT_EQ(c.misses(), 3u);
}

// A candidate rejected by --validate-tactics is kept with its error, never served as a timing.
TEST(EngineTimingCache, RejectedEntriesRoundTripAndNeverMatch) {
  TimingCache c = sample_cache();
  TimingEntry rejected = entry(lavapipe(), "00112233aabbccdd", "gemm.tile2x2.f32", 0);
  rejected.samples = 0;
  rejected.validation_error = 0.5;
  rejected.rejected = true;
  c.record(rejected);
  TimingEntry measured = entry(lavapipe(), "00112233aabbccdd", "gemm.tile16x16.f32", 700);
  measured.validation_error = 1e-7;
  c.record(measured);
  EXPECT_FALSE(c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile2x2.f32"));
  EXPECT_EQ(c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile16x16.f32")->validation_error, 1e-7);
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/cache.json";
  save_timing_cache(path, c, /*merge_existing=*/false);
  EXPECT_EQ(load_timing_cache(path).entries(), c.entries());
}

TEST(EngineTimingCache, RecordReplacesAndMergePrefersNewer) {
  TimingCache c = sample_cache();
  c.record(entry(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32", 1400));
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32")->median_ns, 1400);

  TimingCache newer;
  newer.record(entry(lavapipe(), "00112233aabbccdd", "gemm.tile8x8.f32", 800));
  newer.record(entry(lavapipe(), "0000000000000001", "gemm.tile8x8.f32", 10));
  c.merge(newer);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile8x8.f32")->median_ns, 800);
  EXPECT_EQ(c.lookup(lavapipe(), "0000000000000001", "gemm.tile8x8.f32")->median_ns, 10);
  EXPECT_EQ(c.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32")->median_ns, 1400);
}

TEST(EngineTimingCache, RoundTripKeepsOtherDevices) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/cache.json";
  save_timing_cache(path, sample_cache());
  const TimingCache back = load_timing_cache(path);
  EXPECT_EQ(back.entries(), sample_cache().entries());
  // A cache written on another device still loads; its entries simply never match here.
  TimingCache only_other;
  only_other.record(entry(other_gpu(), "00112233aabbccdd", "gemm.tile4x4.f32", 12));
  save_timing_cache(path, only_other, /*merge_existing=*/false);
  const TimingCache other = load_timing_cache(path);
  EXPECT_EQ(other.size(), 1u);
  EXPECT_FALSE(other.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32"));
  EXPECT_EQ(other.misses(), 1u);
}

TEST(EngineTimingCache, SaveMergesIntoExistingFile) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/cache.json";
  save_timing_cache(path, sample_cache());
  TimingCache second;
  second.record(entry(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32", 1000));  // newer measurement
  second.record(entry(lavapipe(), "0000000000000002", "conv.direct.f32", 77));
  save_timing_cache(path, second);
  const TimingCache merged = load_timing_cache(path);
  EXPECT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32")->median_ns, 1000);
  EXPECT_EQ(merged.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile8x8.f32")->median_ns, 900.25);
  EXPECT_EQ(merged.lookup(other_gpu(), "00112233aabbccdd", "gemm.tile4x4.f32")->median_ns, 12);

  save_timing_cache(path, second, /*merge_existing=*/false);
  EXPECT_EQ(load_timing_cache(path).size(), 2u);
}

TEST(EngineTimingCache, SaveReplacesACorruptFileWithAWarning) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/cache.json";
  write(path, "{ not json");
  const std::string log = printed([&] { save_timing_cache(path, sample_cache()); });
  EXPECT_NE(log.find("replacing unusable timing cache"), std::string::npos) << log;
  EXPECT_EQ(load_timing_cache(path).size(), 3u);
}

// Each unusable file loads as an empty cache with a warning that says why.
TEST(EngineTimingCache, LoadFailsSoftly) {
  const std::string dir = test::fresh_test_dir("vkg_engine_files");
  save_timing_cache(dir + "/good.json", sample_cache());
  const std::string good = test::read_text(dir + "/good.json");
  struct Case {
    std::string name;
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"garbage",
       std::string("\x7f"
                   "ELF\x00\x01\xff\xfe",
                   8),
       "not valid JSON"},
      {"truncated", good.substr(0, good.size() / 2), "not valid JSON"},
      {"empty", "", "not valid JSON"},
      {"array", "[1, 2]", "expected a JSON object"},
      {"other_format", replaced(good, "vkgraphy-timing-cache", "vkgraphy-tactic-replay"), "format is"},
      {"other_version", replaced(good, "\"version\": 1", "\"version\": 2"), "version 2"},
      {"no_entries", replaced(good, "\"entries\"", "\"entry\""), "missing key \"entries\""},
      {"entries_object", "{\"format\": \"vkgraphy-timing-cache\", \"version\": 1, \"entries\": {}}",
       "expected an array"},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name + ".json";
    write(path, c.text);
    TimingCache cache;
    std::string log;
    EXPECT_NO_THROW(log = printed([&] { cache = load_timing_cache(path); })) << c.name;
    EXPECT_EQ(cache.size(), 0u) << c.name;
    EXPECT_NE(log.find("[W] not using timing cache"), std::string::npos) << c.name << ": " << log;
    EXPECT_NE(log.find(c.expected), std::string::npos) << c.name << ": " << log;
  }
  std::string log = printed([&] { EXPECT_EQ(load_timing_cache(dir + "/missing.json").size(), 0u); });
  EXPECT_NE(log.find("does not exist"), std::string::npos) << log;
  log = printed([&] { EXPECT_EQ(load_timing_cache(dir).size(), 0u); });
  EXPECT_NE(log.find("is a directory"), std::string::npos) << log;
}

TEST(EngineTimingCache, MalformedEntryIsSkipped) {
  const std::string path = test::fresh_test_dir("vkg_engine_files") + "/cache.json";
  save_timing_cache(path, sample_cache());
  write(path, replaced(test::read_text(path), "\"median_ns\": 900.25", "\"median_ns\": \"slow\""));
  TimingCache cache;
  const std::string log = printed([&] { cache = load_timing_cache(path); });
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(log.find("ignoring a timing cache entry"), std::string::npos) << log;
  EXPECT_NE(log.find("median_ns"), std::string::npos) << log;
}

// ---------------------------------------------------------------- corruption

TEST(EngineFilesCorruption, CorruptCacheNeverThrows) {
  const std::string dir = test::fresh_test_dir("vkg_engine_files");
  save_timing_cache(dir + "/good.json", sample_cache());
  const std::string good = test::read_text(dir + "/good.json");
  std::mt19937 rng(1234);
  QuietLogger quiet;
  for (int i = 0; i < 200; ++i) {
    const std::string path = dir + "/bad.json";
    write(path, test::seeded_mutation(good, rng));
    TimingCache cache;
    EXPECT_NO_THROW(cache = load_timing_cache(path)) << "mutation " << i;
    EXPECT_LE(cache.size(), 3u);
    cache.lookup(lavapipe(), "00112233aabbccdd", "gemm.tile4x4.f32");
    EXPECT_NO_THROW(save_timing_cache(path, sample_cache())) << "mutation " << i;
  }
}

TEST(EngineFilesCorruption, CorruptReplayThrowsOnlyVkgError) {
  const std::string dir = test::fresh_test_dir("vkg_engine_files");
  save_tactic_replay(dir + "/good.json", sample_replay());
  const std::string good = test::read_text(dir + "/good.json");
  std::mt19937 rng(5678);
  int rejected = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string path = dir + "/bad.json";
    write(path, test::seeded_mutation(good, rng));
    try {
      load_tactic_replay(path);
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << ": not a vkg::Error: " << e.what();
    }
    looks_like_tactic_replay(path);
  }
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace vkg
