#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/core/file_io.h"
#include "runtime/data/run_results.h"
#include "test_data_util.h"

namespace vkg {
namespace {

constexpr char kRunner[] = "onnxrt-runner-N0-01/01/24-00:00:00";

std::string golden(const std::string& name) { return test::data_dir() + "/" + name; }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

TEST(DataRunResults, LoadsPolygraphyGoldenOutputs) {
  for (const char* file : {"polygraphy_golden_identity.json", "polygraphy_golden_identity_legacy.json"}) {
    const RunResults results = load_run_results(golden(file));
    ASSERT_EQ(results.runs.size(), 1u) << file;
    EXPECT_EQ(results.runs[0].first, kRunner);
    ASSERT_EQ(results.runs[0].second.size(), 1u);
    const IterationResult& it = results.runs[0].second[0];
    EXPECT_EQ(it.runner_name, kRunner);
    EXPECT_DOUBLE_EQ(it.runtime, 0.000123);
    ASSERT_EQ(it.outputs.size(), 1u);
    EXPECT_EQ(it.outputs[0].first, "y");
    EXPECT_EQ(it.outputs[0].second.describe(), "float32[1, 1, 2, 2]");
    // Identity: the output equals the saved input.
    const auto inputs = load_inputs(golden("polygraphy_golden_identity_inputs.json"));
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_TRUE(inputs[0].at("x").bit_equal(it.outputs[0].second));
  }
}

// vkgraphy writes outputs byte for byte as Polygraphy 0.30-0.48 do (read by every later version too).
TEST(DataRunResults, WritesExactlyWhatPolygraphyWrites) {
  const RunResults results = load_run_results(golden("polygraphy_golden_identity_legacy.json"));
  EXPECT_EQ(run_results_to_json(results), test::read_text(golden("polygraphy_golden_identity_legacy.json")));

  const std::string multi = test::read_text(golden("polygraphy_golden_multi.json"));
  const RunResults many = run_results_from_json(multi, "multi");
  EXPECT_EQ(run_results_to_json(many),
            replace_all(multi, "\"polygraphy_class\": \"LazyArray\"", "\"polygraphy_class\": \"LazyNumpyArray\""));

  const auto inputs = load_inputs(golden("polygraphy_golden_identity_inputs.json"));
  EXPECT_EQ(inputs_to_json(inputs), test::read_text(golden("polygraphy_golden_identity_inputs.json")));
}

TEST(DataRunResults, KeepsRunnerIterationAndOutputOrder) {
  const RunResults results = load_run_results(golden("polygraphy_golden_multi.json"));
  ASSERT_EQ(results.runs.size(), 2u);
  EXPECT_EQ(results.runs[1].first, "trt-runner-N0-01/01/24-00:00:01");
  ASSERT_EQ(results.runs[1].second.size(), 2u);
  EXPECT_DOUBLE_EQ(results.runs[1].second[0].runtime, 1e-05);
  EXPECT_DOUBLE_EQ(results.runs[1].second[1].runtime, 2.0);
  const auto& outputs = results.runs[0].second[0].outputs;
  std::vector<std::string> names;
  for (const auto& [name, tensor] : outputs) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"logits", "scale", "indices", "mask", "empty", "sum", "i8", "u16", "i32",
                                             "u32", "u64", "i16"}));
  const IterationResult& it = results.runs[0].second[0];
  EXPECT_EQ(it.find("logits")->describe(), "float32[2, 3]");
  EXPECT_EQ(it.find("scale")->describe(), "float16[]");
  EXPECT_EQ(it.find("indices")->describe(), "int64[3]");
  EXPECT_EQ(it.find("mask")->describe(), "bool[2, 2]");
  EXPECT_EQ(it.find("empty")->describe(), "uint8[0, 3]");
  EXPECT_EQ(it.find("u64")->to_doubles(), (std::vector<double>{18446744073709551615.0}));
  EXPECT_EQ(it.find("i8")->to_doubles(), (std::vector<double>{-128, 0, 127}));
  EXPECT_EQ(it.find("nothing"), nullptr);
  EXPECT_EQ(it.to_map().size(), 12u);
}

TEST(DataRunResults, ReadsPre030LegacyMarkersAndLatin1Arrays) {
  const RunResults results = load_run_results(golden("polygraphy_legacy_markers.json"));
  ASSERT_EQ(results.runs.size(), 1u);
  const Tensor* out = results.runs[0].second.at(0).find("out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->describe(), "float32[2, 3]");
  EXPECT_EQ(out->to_doubles(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(DataRunResults, SavesAndLoadsFilesAtomically) {
  test::TempDir dir;
  RunResults results;
  IterationResult it;
  it.runner_name = "vkgraphy-ref";
  it.runtime = 0.5;
  it.outputs.emplace_back("z", Tensor::from_vector<float>({2}, {1.5f, -2.0f}));
  it.outputs.emplace_back("a", Tensor::scalar<int32_t>(7));
  results.runs.emplace_back("vkgraphy-ref", std::vector<IterationResult>{it});

  const std::string path = dir.file("nested/folder/out.json");
  save_run_results(path, results);
  save_run_results(path, results);  // overwrites
  const RunResults back = load_run_results(path);
  ASSERT_EQ(back.runs.size(), 1u);
  EXPECT_EQ(back.runs[0].second[0].outputs[0].first, "z");  // order kept
  EXPECT_TRUE(back.runs[0].second[0].outputs[1].second.bit_equal(Tensor::scalar<int32_t>(7)));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "nested/folder")) {
    EXPECT_EQ(entry.path().filename(), "out.json");  // no temporary file left behind
    ++files;
  }
  EXPECT_EQ(files, 1u);

  std::vector<TensorMap> inputs(2);
  inputs[0].emplace("x", Tensor::from_vector<Half>({1}, {Half(0.5f)}));
  inputs[1].emplace("x", Tensor::from_vector<Half>({1}, {Half(0.25f)}));
  save_inputs(dir.file("in.json"), inputs);
  const auto loaded = load_inputs(dir.file("in.json"));
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_TRUE(loaded[1].at("x").bit_equal(inputs[1].at("x")));

  // A failed write leaves the old file alone and names the file.
  std::filesystem::create_directories(dir.path() / "is_a_dir");
  EXPECT_ERROR_CONTAINS(save_inputs(dir.file("is_a_dir"), inputs), "is_a_dir");
  EXPECT_EQ(load_inputs(dir.file("in.json")).size(), 2u);
}

TEST(DataRunResults, SavesBFloat16AsFloat32) {
  RunResults results;
  IterationResult it;
  it.runner_name = "r";
  it.outputs.emplace_back("b", Tensor::from_vector<BFloat16>({1}, {BFloat16(1.5f)}));
  results.runs.emplace_back("r", std::vector<IterationResult>{it});
  const RunResults back = run_results_from_json(run_results_to_json(results), "mem");
  EXPECT_EQ(back.runs[0].second[0].outputs[0].second.describe(), "float32[1]");
  EXPECT_EQ(back.runs[0].second[0].outputs[0].second.to_doubles(), (std::vector<double>{1.5}));
}

TEST(DataRunResults, ReportsMalformedFilesClearly) {
  test::TempDir dir;
  EXPECT_ERROR_CONTAINS(load_run_results(dir.file("missing.json")), "missing.json");
  EXPECT_ERROR_CONTAINS(run_results_from_json("{\"lst\": [", "f.json"), "'f.json': not valid JSON");
  EXPECT_ERROR_CONTAINS(run_results_from_json("[]", "f.json"), "inputs file");
  EXPECT_ERROR_CONTAINS(run_results_from_json("{}", "f.json"), "expected polygraphy_class \"RunResults\"");
  EXPECT_ERROR_CONTAINS(run_results_from_json(R"({"polygraphy_class": "RunResults"})", "f.json"),
                        "missing key \"lst\"");
  EXPECT_ERROR_CONTAINS(run_results_from_json(R"({"lst": [["r"]], "polygraphy_class": "RunResults"})", "f.json"),
                        "lst[0]: expected a [runner_name, [IterationResult, ...]] pair");
  EXPECT_ERROR_CONTAINS(
      run_results_from_json(R"({"lst": [["r", [{"outputs": {}}]]], "polygraphy_class": "RunResults"})", "f.json"),
      "lst[0][1][0]: expected an IterationResult");
  const std::string bad_array = R"({"lst": [["r", [{"outputs": {"y": {"values": {"array": "AB$=",
      "polygraphy_class": "ndarray"}, "polygraphy_class": "LazyArray"}}, "runtime": 1, "runner_name": "r",
      "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})";
  EXPECT_ERROR_CONTAINS(run_results_from_json(bad_array, "f.json"),
                        "'f.json': lst[0][1][0].outputs['y']: invalid base64: '$' at position 2");
  EXPECT_ERROR_CONTAINS(run_results_from_json(replace_all(bad_array, "AB$=", "AAAA"), "f.json"), "magic string");
  EXPECT_ERROR_CONTAINS(run_results_from_json(replace_all(bad_array, "\"ndarray\"", "\"Tensor\""), "f.json"),
                        "PyTorch tensor");
  EXPECT_ERROR_CONTAINS(run_results_from_json(replace_all(bad_array, "\"ndarray\"", "\"FormattedArray\""), "f.json"),
                        "unsupported polygraphy_class \"FormattedArray\"");
  EXPECT_ERROR_CONTAINS(run_results_from_json(replace_all(bad_array, "\"runtime\": 1", "\"runtime\": \"x\""), "f.json"),
                        "\"runtime\" must be a number");

  EXPECT_ERROR_CONTAINS(inputs_from_json(test::read_text(golden("polygraphy_golden_identity.json")), "o.json"),
                        "'o.json': holds outputs (RunResults), not inputs");
  EXPECT_ERROR_CONTAINS(inputs_from_json("[{\"x\": 1}]", "i.json"), "'i.json': [0]['x']: expected an encoded array");
  EXPECT_ERROR_CONTAINS(inputs_from_json("[3]", "i.json"), "[0]: expected a {name: array} dict");
  EXPECT_ERROR_CONTAINS(inputs_from_json("{}", "i.json"), "not an inputs file");
}

// Files vkgraphy writes must load with plain numpy (what Polygraphy's decoder does).
// The interpreter: /usr/bin/python3 (Debian's python3-numpy, which setup.sh installs), or
// VKGRAPHY_NUMPY_PYTHON where the machine has numpy elsewhere (the GPU machine's image has no Debian
// packages; bench/gpu.sh points it at that image's Python).
TEST(DataRunResults, FilesLoadWithNumpy) {
  const char* env = std::getenv("VKGRAPHY_NUMPY_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "/usr/bin/python3";
  ASSERT_EQ(std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()), 0)
      << python << " with numpy (Debian's python3-numpy, installed by setup.sh; or VKGRAPHY_NUMPY_PYTHON) is "
      << "not available";
  test::TempDir dir;
  RunResults results;
  IterationResult it;
  it.runner_name = "vkgraphy-runner";
  it.runtime = 0.25;
  it.outputs.emplace_back("f32", Tensor::from_vector<float>({2, 2}, {1.0f, -2.5f, 3.25f, 1e-7f}));
  it.outputs.emplace_back("f16", Tensor::scalar<Half>(Half(0.1f)));
  it.outputs.emplace_back("i64", Tensor::from_vector<int64_t>({3}, {-1, 0, 1LL << 40}));
  it.outputs.emplace_back("u8", Tensor::from_vector<uint8_t>({1, 2}, {0, 255}));
  it.outputs.emplace_back("b", Tensor::from_vector<bool>({3}, {true, false, true}));
  it.outputs.emplace_back("empty", Tensor(DType::Float64, {0, 2}));
  results.runs.emplace_back("vkgraphy-runner", std::vector<IterationResult>{it});
  save_run_results(dir.file("out.json"), results);
  save_inputs(dir.file("in.json"), {it.to_map()});

  auto hex = [](const Tensor& t) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < t.nbytes(); ++i) {
      const auto b = static_cast<unsigned char>(t.raw()[i]);
      s += digits[b >> 4];
      s += digits[b & 15];
    }
    return s.empty() ? "-" : s;
  };
  auto numpy_shape = [](const Shape& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(shape[i]);
    }
    return s + ")";
  };
  std::string expected_outputs, expected_inputs;
  for (const auto& [name, t] : it.outputs) {
    expected_outputs += "vkgraphy-runner[0][" + name + "] " + dtype_name(t.dtype()) + " " + numpy_shape(t.shape()) +
                        " " + hex(t) + "\n";
  }
  for (const auto& [name, t] : it.to_map()) {
    expected_inputs +=
        "inputs[0][" + name + "] " + dtype_name(t.dtype()) + " " + numpy_shape(t.shape()) + " " + hex(t) + "\n";
  }
  const std::string script = test::data_dir() + "/read_with_numpy.py";
  for (const auto& [file, expected] :
       {std::pair{dir.file("out.json"), expected_outputs}, std::pair{dir.file("in.json"), expected_inputs}}) {
    const std::string command = python + " " + script + " " + file + " > " + file + ".txt 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << test::read_text(file + ".txt");
    EXPECT_EQ(test::read_text(file + ".txt"), expected);
  }
}

}  // namespace
}  // namespace vkg
