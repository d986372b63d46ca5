#include "tests/unit/vk_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "runtime/core/einsum_equation.h"
#include "runtime/core/error.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::test {

namespace {

std::vector<std::pair<std::string, VkCaseFactory>>& case_factories() {
  static std::vector<std::pair<std::string, VkCaseFactory>> factories;
  return factories;
}

ValueInfo value_info_of(const std::string& name, const Tensor& t) {
  ValueInfo v;
  v.name = name;
  v.dtype = t.dtype();
  std::vector<Dim> dims;
  for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
  v.shape = dims;
  return v;
}

// Float inputs a tactic reads on the host at build time, in full precision
// (coordinates and bounds, not data): Resize's roi and scales, Upsample's
// scales, Clip's bounds, Pad's value.
bool is_host_parameter(const std::string& op, size_t input) {
  if (op == "Resize") return input == 1 || input == 2;
  if (op == "Upsample") return input == 1;
  if (op == "Clip") return input == 1 || input == 2;
  if (op == "Pad") return input == 2;
  return false;
}

// The case with every float32 input rounded to fp16 (what fp16 storage holds),
// host parameters excepted.
VkCase with_fp16_rounded_inputs(VkCase c) {
  for (auto& [name, t] : c.inputs) {
    if (t.dtype() != DType::Float32) continue;
    const auto pos = std::find(c.node.inputs.begin(), c.node.inputs.end(), name);
    if (c.constants.count(name) && is_host_parameter(c.node.op_type, size_t(pos - c.node.inputs.begin()))) continue;
    t = t.cast(DType::Float16).cast(DType::Float32);
  }
  return c;
}

std::vector<Tensor> reference_outputs(const VkCase& c) {
  std::vector<const Tensor*> inputs;
  for (const std::string& name : c.node.inputs) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const auto& p) { return p.first == name; });
    VKG_CHECK(it != c.inputs.end(), "case '" << c.name << "': no value for input '" << name << "'");
    inputs.push_back(&it->second);
  }
  return run_reference_node(c.node, c.opset, inputs);
}

}  // namespace

bool register_vk_cases(const char* family, VkCaseFactory factory) {
  case_factories().emplace_back(family, std::move(factory));
  return true;
}

std::vector<VkCase> all_vk_cases() {
  std::vector<VkCase> out;
  for (const auto& [family, factory] : case_factories()) {
    for (VkCase c : factory()) {
      c.name = family + "/" + c.name;
      if (c.node.name.empty()) c.node.name = "layer";
      out.push_back(std::move(c));
    }
  }
  return out;
}

void select_test_vulkan_driver() {
  if (std::getenv("VK_DRIVER_FILES") == nullptr && std::getenv("VK_ICD_FILENAMES") == nullptr &&
      std::filesystem::exists(kLavapipeIcd)) {
    setenv("VK_DRIVER_FILES", kLavapipeIcd, 1);
  }
}

bool no_vulkan_declared() { return std::getenv(kNoVulkanEnv) != nullptr; }

namespace {

std::unique_ptr<vk::Context> shared_context;

// Closes the shared context inside RUN_ALL_TESTS rather than among the static destructors at exit
// (where a GPU driver may already be torn down: the unit tests ended in a segfault on NVIDIA's),
// and fails the run for a validation message that no test turned into a failure of its own.
std::vector<std::string> unchecked_messages;  // "<test>: <message>"

// After each test: the shared context's messages that the test did not check, with its name.
class UncheckedMessages : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!shared_context) return;
    for (const std::string& m : shared_context->instance().validation_messages())
      unchecked_messages.push_back(std::string(test.test_suite_name()) + "." + test.name() + ": " + m);
    shared_context->instance().clear_validation_messages();
  }
};

class SharedContextEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ::testing::UnitTest::GetInstance()->listeners().Append(new UncheckedMessages); }
  void TearDown() override {
    for (const std::string& m : unchecked_messages)
      ADD_FAILURE() << "Vulkan validation message that no check of the test turned into a failure, in " << m;
    shared_context.reset();
  }
};

[[maybe_unused]] const ::testing::Environment* const shared_context_environment =
    ::testing::AddGlobalTestEnvironment(new SharedContextEnvironment);

}  // namespace

vk::Context* test_vk_context(std::string* why) {
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    select_test_vulkan_driver();
    if (vk::vulkan_available(&failure)) {
      vk::DeviceOptions options;
      options.validation = true;
      // On a GPU with both extensions, the tensor-core tests through VK_NV_cooperative_matrix
      // (bench/gpu.sh tests conformance-nv); KHR's otherwise.
      const char* nv = std::getenv("VKGRAPHY_TEST_DISABLE_COOPERATIVE_MATRIX_KHR");
      options.disable_cooperative_matrix_khr = nv != nullptr && std::string(nv) == "1";
      shared_context = std::make_unique<vk::Context>(options);
    }
  }
  if (!shared_context && why != nullptr) *why = failure;
  return shared_context.get();
}

Graph case_graph(const VkCase& c) {
  Graph g;
  g.name = c.name;
  g.opset = c.opset;
  g.ir_version = 8;
  g.nodes.push_back(c.node);
  for (const auto& [name, value] : c.inputs) {
    if (c.constants.count(name)) {
      g.initializers[name] = value;
    } else {
      g.inputs.push_back(value_info_of(name, value));
      g.value_info[name] = g.inputs.back();
    }
  }
  const std::vector<Tensor> outs = reference_outputs(c);
  for (size_t i = 0; i < c.node.outputs.size() && i < outs.size(); ++i) {
    if (c.node.outputs[i].empty()) continue;
    g.outputs.push_back(value_info_of(c.node.outputs[i], outs[i]));
    g.value_info[c.node.outputs[i]] = g.outputs.back();
  }
  return g;
}

namespace {

const Tensor* case_input(const VkCase& c, size_t i) {
  if (i >= c.node.inputs.size() || c.node.inputs[i].empty()) return nullptr;
  for (const auto& [name, t] : c.inputs)
    if (name == c.node.inputs[i]) return &t;
  return nullptr;
}

bool is_windowed(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv" || op == "MaxPool" ||
         op == "AveragePool" || op == "LpPool";
}

void add_window_classes(const VkCase& c, std::set<std::string>& out) {
  const Node& n = c.node;
  const bool pool = n.op_type.find("Pool") != std::string::npos;
  std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
  if (kernel.empty() && !pool) {
    const Tensor* w = case_input(c, n.op_type == "QLinearConv" ? 3 : 1);
    if (w != nullptr && w->shape().size() > 2) kernel.assign(w->shape().begin() + 2, w->shape().end());
  }
  const bool all_one = std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; });
  const bool all_three = std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 3; });
  out.insert(all_one ? "kernel-1x1" : all_three ? "kernel-3x3" : "kernel-other");
  if (kernel.size() != 2) out.insert("not-2d");
  int64_t taps = 1;
  for (int64_t k : kernel) taps *= k;
  if (taps < 16) out.insert("small-window");
  if (!pool) {
    const Tensor* w = case_input(c, n.op_type == "QLinearConv" ? 3 : 1);
    if (w != nullptr && w->shape().size() > 1 && (w->shape()[1] * taps) % 4 != 0) out.insert("k-tail");
    if (w != nullptr && w->shape().size() > 1 && (w->shape()[1] * taps) % 8 != 0) out.insert("k-tail8");
  }
  const auto any_not = [](const std::vector<int64_t>& v, int64_t value) {
    return std::any_of(v.begin(), v.end(), [&](int64_t x) { return x != value; });
  };
  if (any_not(n.attr_ints("strides"), 1)) out.insert("strided");
  if (any_not(n.attr_ints("dilations"), 1)) out.insert("dilated");
  if (any_not(n.attr_ints("pads"), 0) || n.attr_string("auto_pad", "NOTSET") != "NOTSET" ||
      any_not(n.attr_ints("output_padding"), 0))
    out.insert("padded");
  const int64_t group = n.attr_int("group", 1);
  const Tensor* x = case_input(c, 0);
  if (group > 1) out.insert("grouped");
  if (!pool) out.insert(x != nullptr && x->shape().size() > 1 && x->shape()[1] == group ? "depthwise" : "not-depthwise");
  if (kernel.size() > 3) out.insert("spatial>3");
  if (n.op_type == "Conv") {
    // conv.depthwise_wide: rows of more than 4 outputs.
    const std::vector<Tensor> y = reference_outputs(c);
    if (!y.empty() && !y[0].shape().empty() && y[0].shape().back() <= 4) out.insert("short-rows");
    // conv.depthwise_tile: one output channel per input channel.
    const Tensor* w = case_input(c, 1);
    if (x != nullptr && w != nullptr && x->shape().size() > 1 && x->shape()[1] == group && w->shape()[0] != group)
      out.insert("channel-multiplier");
    // conv.direct_tile: few taps per output, 4 or more output channels per group, strides up to 2,
    // kernels up to 5.
    if (w != nullptr && w->shape().size() > 1) {
      if (w->shape()[1] * taps > 1024) out.insert("many-taps");
      if (w->shape()[0] / group < 4) out.insert("narrow-groups");
      // conv.im2col_splitk: a depth (C * taps) to split, and few 32 x 32 output tiles to fill a GPU.
      if (w->shape()[1] * taps < 256) out.insert("shallow-k");
      if (!y.empty() && y[0].shape().size() > 2) {
        const Shape& ys = y[0].shape();
        const int64_t positions = num_elements(Shape(ys.begin() + 2, ys.end()));
        if ((ys[1] + 31) / 32 * ((positions + 31) / 32) * ys[0] >= 64) out.insert("many-tiles");
      }
    }
    const std::vector<int64_t> strides = n.attr_ints("strides");
    if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 2; })) out.insert("stride>2");
    if (std::any_of(kernel.begin(), kernel.end(), [](int64_t k) { return k > 5; })) out.insert("kernel>5");
  }
  if (n.op_type == "ConvTranspose") {
    // conv.transpose_block: kernel == strides, input channels and positions in vec4 runs.
    std::vector<int64_t> strides = n.attr_ints("strides");
    if (strides.empty()) strides.assign(kernel.size(), 1);
    if (strides != kernel) out.insert("kernel-not-stride");
    if (x != nullptr && x->shape().size() > 2) {
      if (x->shape()[1] % 4 != 0) out.insert("channel-tail");
      if (num_elements(Shape(x->shape().begin() + 2, x->shape().end())) % 4 != 0) out.insert("input-positions-tail");
    }
  }
  if (n.op_type == "MaxPool") out.insert("max");
  if (pool && !kernel.empty()) {
    // Input columns a block of 4 adjacent outputs reads along the innermost axis.
    const std::vector<int64_t> strides = n.attr_ints("strides"), dilations = n.attr_ints("dilations");
    const int64_t s = strides.empty() ? 1 : strides.back(), d = dilations.empty() ? 1 : dilations.back();
    if (3 * s + (kernel.back() - 1) * d + 1 > 64) out.insert("wide-span");
  }
}

void add_resize_classes(const VkCase& c, const Tensor& input, const Tensor& output, std::set<std::string>& out) {
  out.insert("coord:" + c.node.attr_string("coordinate_transformation_mode", "half_pixel"));
  std::string mode = c.node.attr_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  out.insert(mode);
  if (input.shape().size() < 2) out.insert("rank-1");
  const size_t rank = input.shape().size();
  for (size_t d = 0; d < rank && d < output.shape().size(); ++d) {
    const int64_t in = input.shape()[d], o = output.shape()[d];
    if (in == 0 || o % in != 0) out.insert("not-whole-factor");
    if (in != o && d + 2 < rank) out.insert("outer-axes-resized");
  }
}

}  // namespace

bool has_nonfinite_input(const VkCase& c) {
  for (const auto& [name, t] : c.inputs) {
    if (!is_floating(t.dtype())) continue;
    for (int64_t i = 0; i < t.size(); ++i)
      if (!std::isfinite(t.get_as_double(i))) return true;
  }
  return false;
}

std::set<std::string> case_classes(const VkCase& c) {
  std::set<std::string> out;
  const std::string& op = c.node.op_type;
  out.insert("op:" + op);
  const std::vector<Tensor> outputs = reference_outputs(c);
  bool has_float = false;
  for (const auto& [name, t] : c.inputs) {
    has_float |= is_float_dtype(t.dtype());
    if (t.size() == 0) out.insert("empty");
  }
  for (const Tensor& t : outputs) {
    has_float |= is_float_dtype(t.dtype());
    if (t.size() == 0) out.insert("empty");
  }
  if (!has_float) out.insert("int");
  if (const Tensor* x = case_input(c, 0); x != nullptr && !is_floating(x->dtype())) out.insert("int-data");
  if (outputs.empty()) return out;
  const Tensor& y = outputs[0];
  if (!y.shape().empty() && y.shape().back() % 4 != 0) out.insert("tail");
  if (op.find("Conv") != std::string::npos && y.shape().size() > 2) {
    const int64_t positions = num_elements(Shape(y.shape().begin() + 2, y.shape().end()));
    if (positions % 4 != 0) out.insert("positions-tail");
    if (positions % 8 != 0) out.insert("positions-tail8");
  }
  const auto unaligned = [](const Tensor& t) { return !t.shape().empty() && t.shape().back() % 4 != 0; };
  for (const auto& [name, t] : c.inputs)
    if (!c.constants.count(name) && unaligned(t)) out.insert("unaligned");
  for (const Tensor& t : outputs)
    if (unaligned(t)) out.insert("unaligned");
  if ((op == "Concat" && c.node.inputs.size() > 8) || (op == "Split" && c.node.outputs.size() > 8))
    out.insert("parts>8");
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    const Tensor* t = case_input(c, i);
    if (t != nullptr && !c.constants.count(c.node.inputs[i]) && t->shape() != y.shape() && t->size() > 1 &&
        c.node.inputs.size() > 1)
      out.insert("broadcast");
  }
  if (op == "MatMul" || op == "Gemm" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const size_t b = op == "QLinearMatMul" ? 3 : 1;
    if (c.node.inputs.size() > b && !c.constants.count(c.node.inputs[b])) out.insert("runtime-weight");
    const Shape& s = y.shape();
    const Tensor* a = case_input(c, 0);
    const Tensor* bt = case_input(c, b);
    const bool trans_a = op == "Gemm" && c.node.attr_int("transA", 0) != 0;
    const bool trans_b = op == "Gemm" && c.node.attr_int("transB", 0) != 0;
    int64_t m = 1, n = 1;
    if (a != nullptr && a->shape().size() >= 2) m = a->shape()[a->shape().size() - (trans_a ? 1 : 2)];
    if (bt != nullptr && bt->shape().size() >= 2) n = bt->shape()[bt->shape().size() - (trans_b ? 2 : 1)];
    out.insert(m == 1 ? "vector" : "matrix");
    if (n % 4 != 0) out.insert("tail");
    if (n % 8 != 0) out.insert("tail8");
    const int64_t k = a == nullptr || a->shape().empty() ? 0 : a->shape()[a->shape().size() - (trans_a ? 2 : 1)];
    if (k % 4 != 0) out.insert("k-tail");
    if (k % 8 != 0) out.insert("k-tail8");
    if (k < 256) out.insert("shallow-k");  // too shallow for split-K
    if (trans_a) out.insert("transposed-A");
    if (op == "Gemm" && c.node.attr_int("transB", 0) != 0) out.insert("transposed-B");
    if (s.size() > 2 && num_elements(Shape(s.begin(), s.end() - 2)) > 1) out.insert("batched");
  }
  if (is_windowed(op)) {
    add_window_classes(c, out);
    const size_t w = op == "QLinearConv" ? 3 : 1;
    if (op.find("Pool") == std::string::npos && c.node.inputs.size() > w && !c.constants.count(c.node.inputs[w]))
      out.insert("runtime-weight");
  }
  if (op == "GlobalMaxPool") out.insert("max");
  if ((op == "DepthToSpace" || op == "SpaceToDepth") && c.node.attr_int("blocksize", 1) % 4 != 0)
    out.insert("block-not-4");  // the block axes are transposed: vectors need blocks of 4
  if (op == "RNN" || op == "GRU" || op == "LSTM") {
    const int64_t hidden = c.node.attr_int("hidden_size", 0);
    if (hidden <= 64) out.insert("small-hidden");  // at most half a workgroup of 128 units
    // One invocation of a 32-wide workgroup loops over every step past an eighth of lavapipe's
    // loop iteration limit (runtime/tactics/recurrent.cpp, plan_workgroup).
    const Tensor* x = case_input(c, 0);
    const Tensor* w = case_input(c, 1);
    if (x != nullptr && w != nullptr && x->shape().size() == 3 && hidden > 0) {
      const int64_t steps = x->shape()[0] * x->shape()[1];  // seq * batch: layout-independent bound
      const int64_t units = (hidden + 31) / 32;
      if (steps * units * (w->shape()[1] / hidden) * (x->shape()[2] + hidden) > 65535 / 8) out.insert("long-loop");
    }
  }
  if (op == "Einsum") {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < c.node.inputs.size(); ++i) shapes.push_back(case_input(c, i)->shape());
    const EinsumEquation e = parse_einsum(c.node.attr_string("equation", ""), shapes, c.node.describe());
    if (e.inputs.size() > 4) out.insert("operands>4");
    std::string why;
    if (!einsum_as_gemm(e, why)) out.insert("not-matmul-form");
  }
  if (op == "Attention") {
    const auto head = [&](size_t i, const char* attr) {
      const Shape& s = case_input(c, i)->shape();
      return s.size() == 4 ? s[3] : s[2] / std::max<int64_t>(1, c.node.attr_int(attr, 1));
    };
    if (head(0, "q_num_heads") > 256 || head(2, "kv_num_heads") > 256) out.insert("head>256");
    if (c.node.attr_int("softmax_precision", 1) == 11) out.insert("softmax-double");
  }
  if (op == "DFT" || op == "STFT") {
    // The transform length (dft_length, frame_length, or what they default to).
    const Tensor* x = case_input(c, 0);
    int64_t n = 0;
    if (op == "DFT") {
      const int64_t rank = int64_t(x->shape().size());
      int64_t axis = c.opset >= 20 ? -2 : c.node.attr_int("axis", 1);
      const Tensor* axis_input = c.opset >= 20 ? case_input(c, 2) : nullptr;
      if (axis_input != nullptr) axis = axis_input->to_int64s().at(0);
      n = x->shape().at(size_t(axis < 0 ? axis + rank : axis));
    } else {
      n = x->shape().at(1);
      if (const Tensor* window = case_input(c, 2)) n = window->size();
    }
    if (const Tensor* length = case_input(c, op == "DFT" ? 1 : 3)) n = length->to_int64s().at(0);
    if (n < 2 || (n & (n - 1)) != 0) out.insert("not-pow2");
  }
  if (op == "Slice") {
    const Tensor* steps = case_input(c, 4);
    if (steps != nullptr) {
      const std::vector<int64_t> v = steps->to_int64s();
      if (std::any_of(v.begin(), v.end(), [](int64_t x) { return x < 0; })) out.insert("negative-step");
    }
  }
  if (op.rfind("Reduce", 0) == 0) {
    // Runs of reduced and kept axes (size-1 axes join either).
    std::vector<int64_t> axes = c.node.attr_ints("axes");
    if (const Tensor* a = case_input(c, 1)) axes = a->to_int64s();
    const Tensor* x = case_input(c, 0);
    if (x != nullptr && !axes.empty()) {
      const int64_t rank = int64_t(x->shape().size());
      int runs = 0, last = -1;
      for (int64_t d = 0; d < rank; ++d) {
        if (x->shape()[size_t(d)] == 1) continue;
        const int reduced = std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return (a + rank) % rank == d; });
        if (reduced != last) ++runs, last = reduced;
      }
      if (runs > 4) out.insert("axis-runs>4");
    }
  }
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && c.opset >= 13) {
    // Rows along a single axis (opset 13): strided unless every axis after it has size 1.
    const Tensor* x = case_input(c, 0);
    if (x != nullptr && !x->shape().empty()) {
      const int64_t rank = int64_t(x->shape().size()), axis = c.node.attr_int("axis", -1);
      for (int64_t d = (axis + rank) % rank + 1; d < rank; ++d)
        if (x->shape()[size_t(d)] != 1) out.insert("strided-rows");
    }
  }
  if ((op == "Resize" || op == "Upsample") && case_input(c, 0) != nullptr)
    add_resize_classes(c, *case_input(c, 0), y, out);
  return out;
}

VkCaseRun run_case_with_tactic(const VkCase& c, const Tactic& tactic, TexelBuilds texel) {
  VkCaseRun run;
  vk::Context* ctx = test_vk_context();
  VKG_CHECK(ctx != nullptr, "no Vulkan device");
  const Graph graph = case_graph(c);
  const std::vector<Tensor> ref = reference_outputs(c);
  for (size_t i = 0; i < c.node.outputs.size() && i < ref.size(); ++i) {
    if (!c.node.outputs[i].empty()) run.reference[c.node.outputs[i]] = ref[i];
  }
  if (tactic.arith == Arith::F16Acc32) {
    const std::vector<Tensor> ref16 = reference_outputs(with_fp16_rounded_inputs(c));
    for (size_t i = 0; i < c.node.outputs.size() && i < ref16.size(); ++i)
      if (!c.node.outputs[i].empty()) run.reference_f16_inputs[c.node.outputs[i]] = ref16[i];
  }
  bool has_float = false;
  for (const auto& [name, t] : c.inputs) has_float |= is_float_dtype(t.dtype());
  for (const auto& [name, t] : run.reference) has_float |= is_float_dtype(t.dtype());
  if (tactic.precision() == Precision::FP16 && !has_float) {
    run.why_not = "the layer has no float tensors";
    return run;
  }

  BuilderConfig config;
  config.tactics_allow = {tactic.name};
  config.fp16 = tactic.precision() == Precision::FP16;
  config.layer_precisions[c.node.name] = tactic.precision();
  config.constraints = PrecisionConstraints::Obey;
  config.optimization_level = 0;
  vk::DeviceInfo info = ctx->device().info();
  info.texel_buffers = info.texel_buffers && texel != TexelBuilds::PlannedWithout;
  BuildResult built;
  try {
    built = build_engine(graph, config, info, device_identity(info), nullptr);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("no tactic can serve", 0) != 0) throw;
    // The builder lists each tactic's reason on its own line: keep this tactic's.
    const std::string marker = "\n  " + tactic.name + ": ";
    const size_t at = what.find(marker);
    run.why_not = at == std::string::npos ? what : what.substr(at + marker.size(), what.find('\n', at + 1) - at - marker.size());
    return run;
  }
  const bool ran_tactic = std::any_of(built.engine.layers.begin(), built.engine.layers.end(),
                                      [&](const EngineLayer& l) { return l.tactic == tactic.name; });
  VKG_CHECK(ran_tactic, "case '" << c.name << "' was folded at build time: give it a runtime input");
  run.served = true;
  if (texel == TexelBuilds::SwitchedToStorage) {
    for (EngineLayer& layer : built.engine.layers)
      for (Dispatch& d : layer.plan.dispatches)
        if (is_texel_build(d.shader)) {
          d.shader = storage_build(d.shader);
          const std::span<const uint32_t> words = vk::builtin_shader(d.shader);
          built.engine.spirv[d.shader] = std::vector<uint32_t>(words.begin(), words.end());
        }
  }

  TensorMap inputs;
  for (const auto& [name, value] : c.inputs) {
    if (!c.constants.count(name)) inputs[name] = value;
  }
  vk::EngineExecutor executor(ctx->device(), built.engine);
  run.vulkan = executor.run(inputs);
  ctx->check_validation("case '" + c.name + "' with tactic " + tactic.name);
  return run;
}

std::string compare_case_outputs(const VkCase& c, const VkCaseRun& run, Arith arith, double extra_atol) {
  double atol = c.atol, rtol = c.rtol;
  switch (arith) {
    case Arith::F32:
      break;
    case Arith::F16:
      atol = c.atol_fp16, rtol = c.rtol_fp16;
      break;
    case Arith::F16Acc32:
      atol = c.atol_f16acc32, rtol = c.rtol_f16acc32;
      break;
  }
  atol += extra_atol;
  const TensorMap& reference = arith == Arith::F16Acc32 ? run.reference_f16_inputs : run.reference;
  std::ostringstream out;
  for (const auto& [name, ref] : reference) {
    auto it = run.vulkan.find(name);
    if (it == run.vulkan.end()) {
      out << "output '" << name << "' missing; ";
      continue;
    }
    const Tensor& got = it->second;
    if (got.shape() != ref.shape() || got.dtype() != ref.dtype()) {
      out << "output '" << name << "': got " << got.describe() << ", expected " << ref.describe() << "; ";
      continue;
    }
    const bool exact = !is_floating(ref.dtype());
    int reported = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < ref.size(); ++i) {
      const double a = got.get_as_double(i), b = ref.get_as_double(i);
      bool ok;
      if (std::isnan(b))
        ok = std::isnan(a);
      else if (std::isinf(b))
        ok = a == b;
      else
        ok = exact ? a == b : std::abs(a - b) <= atol + rtol * std::abs(b);
      if (ok) continue;
      ++bad;
      if (reported++ < 3) out << "output '" << name << "'[" << i << "]: got " << a << ", expected " << b << "; ";
    }
    if (bad > 0) out << bad << " of " << ref.size() << " elements of '" << name << "' differ; ";
  }
  return out.str();
}

VkCase make_case(std::string name, const std::string& op, std::vector<std::optional<Tensor>> inputs,
                 std::map<std::string, Attribute> attrs, size_t num_outputs, std::set<size_t> constant_inputs) {
  VkCase c;
  c.name = std::move(name);
  c.node = make_named_node("layer", op, inputs.size(), num_outputs, std::move(attrs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      c.node.inputs[i] = "";
      continue;
    }
    c.inputs.emplace_back(c.node.inputs[i], std::move(*inputs[i]));
    if (constant_inputs.count(i)) c.constants.insert(c.node.inputs[i]);
  }
  return c;
}

TacticPlanner::TacticPlanner(const std::string& op, int64_t opset, Attrs attrs) : opset_(opset) {
  node_.name = "layer";
  node_.op_type = op;
  node_.attrs = std::move(attrs);
  device_.max_workgroup_count[0] = device_.max_workgroup_count[1] = device_.max_workgroup_count[2] = 65535;
  device_.max_workgroup_invocations = device_.max_workgroup_size[0] = 1024;
  device_.max_storage_buffers_per_stage = 32;
  device_.subgroup_size = 8;
  device_.shader_float16 = device_.storage_buffer_16bit = true;
}

void TacticPlanner::input(DType dtype, Shape shape, std::optional<Tensor> constant) {
  constants_.push_back(constant ? std::make_unique<Tensor>(std::move(*constant)) : nullptr);
  inputs_.push_back(
      {"in" + std::to_string(inputs_.size()), dtype, std::move(shape), StorageType::F32, constants_.back().get()});
  node_.inputs.push_back(inputs_.back().name);
}

void TacticPlanner::output(DType dtype, Shape shape) {
  outputs_.push_back({"out" + std::to_string(outputs_.size()), dtype, std::move(shape), StorageType::F32, nullptr});
  node_.outputs.push_back(outputs_.back().name);
}

std::optional<LayerPlan> TacticPlanner::plan(const std::string& tactic_name, std::string& why_not) {
  const Tactic* tactic = TacticRegistry::builtin().find(tactic_name);
  VKG_CHECK(tactic != nullptr, "no tactic " << tactic_name);
  std::vector<LayerTensor> ins = inputs_, outs = outputs_;
  for (auto* list : {&ins, &outs})
    for (LayerTensor& t : *list) t.storage = storage_for(t.dtype, tactic->precision()).value_or(StorageType::F32);
  LayerContext ctx{node_, opset_, tactic->precision(), tactic->arith, ins, outs, device_};
  return tactic->plan(ctx, why_not);
}

}  // namespace vkg::test
