#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/data/data_loader.h"
#include "runtime/data/run_results.h"
#include "test_data_util.h"

namespace vkg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ValueInfo input(const std::string& name, std::optional<DType> dtype, std::optional<std::vector<Dim>> dims) {
  ValueInfo v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(dims);
  return v;
}

std::vector<Dim> dims(std::initializer_list<int64_t> values) {
  std::vector<Dim> out;
  for (int64_t v : values) out.push_back(Dim{v, v < 0 ? "dyn" : ""});
  return out;
}

struct Spec {
  const char* name;
  DType dtype;
  std::initializer_list<int64_t> shape;
  std::optional<std::pair<double, double>> range;
};

// Keep in sync with DATA_LOADER_SPECS in tests/data/make_polygraphy_golden.py.
const Spec kDataLoaderSpecs[] = {
    {"f32", DType::Float32, {2, 3, 4}, std::nullopt},
    {"f16", DType::Float16, {5, 7}, std::pair{-100.0, 100.0}},
    {"f64", DType::Float64, {4}, std::pair{-1000.0, 1000.0}},
    {"i8", DType::Int8, {9}, std::pair{-3.0, 5.0}},
    {"u8", DType::UInt8, {17}, std::pair{0.0, 255.0}},
    {"i16", DType::Int16, {5}, std::pair{-1000.0, 1000.0}},
    {"u16", DType::UInt16, {6}, std::pair{0.0, 65535.0}},
    {"i32", DType::Int32, {3, 3}, std::pair{-2147483648.0, 2147483647.0}},
    {"u32", DType::UInt32, {4}, std::pair{0.0, 10.0}},
    {"i64", DType::Int64, {2, 5}, std::pair{-1e12, 1e12}},
    {"i64_default", DType::Int64, {7}, std::nullopt},
    {"u64", DType::UInt64, {3}, std::pair{0.0, 1099511627776.0}},
    {"b", DType::Bool, {37}, std::nullopt},
    {"scalar", DType::Float32, {}, std::pair{2.5, 2.5}},
    {"f32_inf", DType::Float32, {6}, std::pair{-kInf, kInf}},
    {"truncated", DType::Int32, {8}, std::pair{-1.5, 2.7}},
    {"empty", DType::Float32, {0, 3}, std::nullopt},
    {"f16_wide", DType::Float16, {64}, std::pair{-70000.0, 70000.0}},
};

// Generation is bit-exact with Polygraphy's DataLoader (numpy RandomState) for every dtype.
TEST(DataLoader, MatchesPolygraphyDataLoaderBitForBit) {
  std::vector<ValueInfo> inputs;
  DataLoaderOptions options;
  options.seed = 7;
  options.iterations = 2;
  for (const auto& spec : kDataLoaderSpecs) {
    inputs.push_back(input(spec.name, spec.dtype, dims(spec.shape)));
    if (spec.range) options.val_range[spec.name] = *spec.range;
  }
  const auto generated = load_or_generate_inputs(inputs, options);
  const auto expected = load_inputs(test::data_dir() + "/polygraphy_dataloader_golden.json");
  ASSERT_EQ(generated.size(), 2u);
  ASSERT_EQ(expected.size(), 2u);
  for (size_t it = 0; it < 2; ++it) {
    for (const auto& spec : kDataLoaderSpecs) {
      const Tensor& got = generated[it].at(spec.name);
      const Tensor& want = expected[it].at(spec.name);
      EXPECT_TRUE(got.bit_equal(want)) << "iteration " << it << " input " << spec.name << ": " << got.describe()
                                       << " vs. " << want.describe();
    }
  }
}

TEST(DataLoader, MatchesPolygraphyRunInputsForIdentity) {
  const auto generated = load_or_generate_inputs({input("x", DType::Float32, dims({1, 1, 2, 2}))}, {});
  const auto expected = load_inputs(test::data_dir() + "/polygraphy_golden_identity_inputs.json");
  ASSERT_EQ(generated.size(), 1u);
  EXPECT_TRUE(generated[0].at("x").bit_equal(expected[0].at("x")));
}

TEST(DataLoader, IsDeterministicPerSeedAndIteration) {
  const std::vector<ValueInfo> inputs = {input("a", DType::Float32, dims({16})), input("b", DType::Int32, dims({4}))};
  DataLoaderOptions options;
  options.iterations = 3;
  options.val_range[""] = {-10, 10};
  const auto first = load_or_generate_inputs(inputs, options);
  const auto second = load_or_generate_inputs(inputs, options);
  ASSERT_EQ(first.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(first[i].at("a").bit_equal(second[i].at("a")));
  EXPECT_FALSE(first[0].at("a").bit_equal(first[1].at("a")));
  EXPECT_TRUE(generate_inputs(inputs, options, 2).at("a").bit_equal(first[2].at("a")));
  options.seed = 2;
  EXPECT_TRUE(load_or_generate_inputs(inputs, options)[0].at("a").bit_equal(first[1].at("a")));  // seed + iteration
  for (double v : first[0].at("a").to_doubles()) EXPECT_TRUE(v >= -10 && v < 10) << v;
  for (double v : first[0].at("b").to_doubles()) EXPECT_TRUE(v >= -10 && v <= 10 && v == std::trunc(v)) << v;
}

TEST(DataLoader, ResolvesDynamicShapes) {
  const std::vector<ValueInfo> inputs = {
      input("X", DType::Float32, std::vector<Dim>{{1, ""}, {2, ""}, {-1, "height"}, {-1, "width"}})};
  EXPECT_EQ(load_or_generate_inputs(inputs, {})[0].at("X").shape(), (Shape{1, 2, 1, 1}));
  DataLoaderOptions options;
  options.input_shapes["X"] = {1, 2, 5, 7};
  EXPECT_EQ(load_or_generate_inputs(inputs, options)[0].at("X").shape(), (Shape{1, 2, 5, 7}));
  options.input_shapes["X"] = {1, 3, 5, 7};
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs(inputs, options), "does not fit the model's");
  options.input_shapes["X"] = {1, 2, 5};
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs(inputs, options), "input 'X': shape [1, 2, 5]");
}

TEST(DataLoader, FillsShapeTensorsFromInputShapes) {
  DataLoaderOptions options;
  options.input_shapes["shape"] = {2, 3, 4};
  const auto feeds = load_or_generate_inputs({input("shape", DType::Int64, dims({3}))}, options);
  EXPECT_EQ(feeds[0].at("shape").to_doubles(), (std::vector<double>{2, 3, 4}));
}

TEST(DataLoader, RejectsWhatItCannotGenerate) {
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("t", std::nullopt, dims({1}))}, {}), "input 't' has an unknown");
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("r", DType::Float32, std::nullopt)}, {}),
                        "input 'r' has an unknown rank");
  DataLoaderOptions options;
  options.input_shapes["r"] = {2, 2};
  EXPECT_EQ(load_or_generate_inputs({input("r", DType::Float32, std::nullopt)}, options)[0].at("r").shape(),
            (Shape{2, 2}));

  auto with_range = [](std::pair<double, double> range) {
    DataLoaderOptions o;
    o.val_range[""] = range;
    return o;
  };
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("i", DType::Int32, dims({2}))}, with_range({5, 3})),
                        "minimum above its maximum");
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("u", DType::UInt8, dims({2}))}, with_range({-1, 5})),
                        "out of bounds for uint8");
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("u", DType::UInt64, dims({2}))}, with_range({0, 0x1p64})),
                        "out of bounds for uint64");
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("i", DType::Int64, dims({2}))}, with_range({-0x1p63, 0x1p63})),
                        "out of bounds for int64");
  EXPECT_EQ(load_or_generate_inputs({input("i", DType::Int64, dims({2}))}, with_range({-0x1p63, 0}))[0].at("i").size(),
            2);
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("i", DType::Int8, dims({2}))}, with_range({0, kInf})),
                        "must be finite");
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("b", DType::Bool, dims({2}))}, with_range({1, 0})),
                        "bool bounds [True, False]");
  DataLoaderOptions zero;
  zero.iterations = 0;
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("x", DType::Float32, dims({1}))}, zero), "at least 1");
  DataLoaderOptions big_seed;
  big_seed.seed = 0xffffffffull;
  big_seed.iterations = 2;
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs({input("x", DType::Float32, dims({1}))}, big_seed), "out of range");
}

TEST(DataLoader, LoadsAndChecksInputsFiles) {
  test::TempDir dir;
  const std::vector<ValueInfo> model = {input("x", DType::Float32, std::vector<Dim>{{-1, "n"}, {3, ""}}),
                                        input("m", DType::Bool, dims({2}))};
  std::vector<TensorMap> feeds(2);
  for (auto& feed : feeds) {
    feed.emplace("x", Tensor(DType::Float32, {4, 3}));
    feed.emplace("m", Tensor(DType::Bool, {2}));
    feed.emplace("extra", Tensor(DType::Int8, {1}));
  }
  save_inputs(dir.file("a.json"), feeds);
  save_inputs(dir.file("b.json"), {feeds[0]});
  DataLoaderOptions options;
  options.load_inputs_paths = {dir.file("a.json"), dir.file("b.json")};
  const auto loaded = load_or_generate_inputs(model, options);
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded[2].at("x").shape(), (Shape{4, 3}));
  EXPECT_EQ(loaded[0].count("extra"), 0u);  // not a model input: dropped with a warning

  options.input_shapes["x"] = {5, 3};
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs(model, options), "but --input-shapes gives [5, 3]");

  auto load_one = [&](TensorMap feed) {
    save_inputs(dir.file("c.json"), {std::move(feed)});
    DataLoaderOptions o;
    o.load_inputs_paths = {dir.file("c.json")};
    return load_or_generate_inputs(model, o);
  };
  TensorMap missing;
  missing.emplace("x", Tensor(DType::Float32, {1, 3}));
  EXPECT_ERROR_CONTAINS(load_one(missing), "iteration 0: model input 'm' is missing (the file has: x)");
  TensorMap wrong_type = feeds[0];
  wrong_type.at("m") = Tensor(DType::Int32, {2});
  EXPECT_ERROR_CONTAINS(load_one(wrong_type), "input 'm' is int32[2] but the model expects bool[2]");
  TensorMap wrong_shape = feeds[0];
  wrong_shape.at("x") = Tensor(DType::Float32, {4, 2});
  EXPECT_ERROR_CONTAINS(load_one(wrong_shape), "input 'x' has shape [4, 2] but the model expects");

  save_inputs(dir.file("empty.json"), {});
  DataLoaderOptions empty;
  empty.load_inputs_paths = {dir.file("empty.json")};
  EXPECT_ERROR_CONTAINS(load_or_generate_inputs(model, empty), "holds no iterations");
}

}  // namespace
}  // namespace vkg
