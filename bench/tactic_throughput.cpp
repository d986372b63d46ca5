// Tactic throughput: GFLOP/s of every GEMM and Conv tactic, in each precision
// it has, for MatMul 512^3 and 1024^3 and convolutions (3x3, 1x1, depthwise), timed on the
// Vulkan device with the builder's own timer (timestamp queries, median of the
// samples), beside the CPU reference backend measured in the same run.
//
//   build/bench/vkgraphy_tactic_bench [--device SELECTOR] [--samples N] [--filter GLOB[,GLOB...]]
//                                     [--case GLOB] [--per-dispatch] [--matmul N|MxKxN]...
//                                     [--conv CIN,COUT,K,SIZE[,GROUPS[,STRIDE]]]... [--no-reference]
//                                     [--warm-up-ms MS] [--peak]
//
// --filter takes globs separated by commas (a tactic runs when one matches); --matmul adds a
// MatMul case (N^3, or [M x K] @ [K x N]) to the built-in ones (a GPU run adds 4096^3,
// bench/gpu.sh); --conv a Conv of one image, "same" padding (a layer of a model: 16,32,1,160 is
// PP-OCRv4 det's 1x1 of 16 into 32 channels at 160x160, 960,60,1x3,1x40 one of rec's; K and SIZE
// square or HxW); --no-reference skips the CPU reference backend's timing (single-threaded,
// minutes at 4096^3), where another baseline runs beside the bench; --warm-up-ms sets the least
// device time of the untimed runs before each tactic's samples (the builder's default: 100 ms on
// GPUs, whose clocks drop while the host prepares the next tactic, 0 on CPU devices); --peak adds
// the case "Peak", the device's arithmetic ceilings: four-wide fp32 and fp16 multiply-adds and
// cooperative-matrix multiply-adds from registers alone and with shared-memory fragment loads
// (`--peak --case Peak` runs only those).
//
// Results and the commands that made them are recorded in docs/bench.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/engine/builder.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/tactics/gemm_common.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/plan_timer.h"

using namespace vkg;

namespace {

struct BenchCase {
  std::string label;
  Node node;
  std::vector<Tensor> inputs;  // in node input order
  std::vector<bool> constant;  // per input: a build-time constant (weights)
  double flops;
  Shape out;  // the output's shape where the case knows it, else empty (the reference backend's)
};

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  Tensor t(DType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// Sets the ints attribute `name` of `node`.
void set_ints(Node& node, const std::string& name, std::vector<int64_t> values) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(values);
  node.attrs[name] = a;
}

// MatMul [m x k] @ [k x n] (the second operand constant, as weights are).
BenchCase matmul(int64_t m, int64_t n, int64_t k) {
  BenchCase c;
  c.label = m == n && n == k ? "MatMul " + std::to_string(n) + "^3"
                             : "MatMul " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  c.node.name = "matmul";
  c.node.op_type = "MatMul";
  c.node.inputs = {"a", "b"};
  c.node.outputs = {"y"};
  c.inputs = {random_tensor({m, k}, 1), random_tensor({k, n}, 2)};
  c.constant = {false, true};
  c.flops = 2.0 * double(m) * double(n) * double(k);
  c.out = {m, n};
  return c;
}

// A convolution (kh x kw, "same" padding) of `cin` channels into `cout` at h x w with `stride`;
// groups == cin == cout makes it depthwise.
BenchCase conv(int64_t cin, int64_t cout, std::array<int64_t, 2> kernel, std::array<int64_t, 2> size,
               int64_t groups = 1, int64_t stride = 1) {
  const auto extent = [](std::array<int64_t, 2> e) { return std::to_string(e[0]) + "x" + std::to_string(e[1]); };
  const auto [kh, kw] = kernel;
  BenchCase c;
  c.label = std::string(groups > 1 ? "DWConv " : "Conv ") + extent(kernel) + " " + std::to_string(cin) + "->" +
            std::to_string(cout) + " " + extent(size) + (stride > 1 ? " s" + std::to_string(stride) : "");
  c.node.name = "conv";
  c.node.op_type = "Conv";
  c.node.inputs = {"x", "w", "b"};
  c.node.outputs = {"y"};
  set_ints(c.node, "pads", {kh / 2, kw / 2, kh / 2, kw / 2});
  if (stride > 1) set_ints(c.node, "strides", {stride, stride});
  if (groups > 1) {
    Attribute group;
    group.kind = Attribute::Kind::Int;
    group.i = groups;
    c.node.attrs["group"] = group;
  }
  c.inputs = {random_tensor({1, cin, size[0], size[1]}, 3), random_tensor({cout, cin / groups, kh, kw}, 4),
              random_tensor({cout}, 5)};
  c.constant = {false, true, true};
  const double out = double((size[0] + stride - 1) / stride) * double((size[1] + stride - 1) / stride);
  c.flops = 2.0 * double(cout) * double(cin / groups) * double(kh * kw) * out;
  return c;
}

// The same, square: k x k at size x size.
BenchCase conv(int64_t cin, int64_t cout, int64_t k, int64_t size, int64_t groups = 1, int64_t stride = 1) {
  return conv(cin, cout, {k, k}, {size, size}, groups, stride);
}

// ConvTranspose with kernel == strides == k (an upsampling layer: PP-OCRv4 det's head) of `cin`
// channels into `cout` at size x size.
BenchCase conv_transpose(int64_t cin, int64_t cout, int64_t k, int64_t size) {
  BenchCase c;
  c.label = "ConvT " + std::to_string(k) + "x" + std::to_string(k) + " s" + std::to_string(k) + " " +
            std::to_string(cin) + "->" + std::to_string(cout) + " " + std::to_string(size) + "x" + std::to_string(size);
  c.node.name = "conv_transpose";
  c.node.op_type = "ConvTranspose";
  c.node.inputs = {"x", "w", "b"};
  c.node.outputs = {"y"};
  set_ints(c.node, "strides", {k, k});
  c.inputs = {random_tensor({1, cin, size, size}, 8), random_tensor({cin, cout, k, k}, 9), random_tensor({cout}, 10)};
  c.constant = {false, true, true};
  c.flops = 2.0 * double(cin) * double(cout) * double(k * k) * double(size * size);
  return c;
}

// Mul of an activation [1, c, size, size] by a per-channel scale [1, c, 1, 1] (a squeeze-and-excite
// block's last step): a broadcast elementwise op; "GFLOP/s" counts one operation per output.
BenchCase scale_channels(int64_t c_count, int64_t size) {
  BenchCase c;
  c.label = "Mul [1," + std::to_string(c_count) + "," + std::to_string(size) + "," + std::to_string(size) + "]x[1," +
            std::to_string(c_count) + ",1,1]";
  c.node.name = "mul";
  c.node.op_type = "Mul";
  c.node.inputs = {"x", "s"};
  c.node.outputs = {"y"};
  c.inputs = {random_tensor({1, c_count, size, size}, 6), random_tensor({1, c_count, 1, 1}, 7)};
  c.constant = {false, false};
  c.flops = double(c_count * size * size);
  return c;
}

// The parts of `text` between the separators `sep` (empty parts included).
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(sep, start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// `spec` split at `sep` into positive integers of at most `digits` digits; nullopt for anything
// else.
std::optional<std::vector<int64_t>> positive_ints(const std::string& spec, char sep, size_t digits) {
  std::vector<int64_t> values;
  for (const std::string& part : split(spec, sep)) {
    if (part.empty() || part.size() > digits || part.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    values.push_back(std::stoll(part));
    if (values.back() <= 0) return std::nullopt;
  }
  return values;
}

// "N" (N^3) or "MxKxN"; nullopt for anything else.
std::optional<BenchCase> matmul_spec(const std::string& spec) {
  const std::optional<std::vector<int64_t>> dims = positive_ints(spec, 'x', 6);
  if (!dims) return std::nullopt;
  if (dims->size() == 1) return matmul((*dims)[0], (*dims)[0], (*dims)[0]);
  if (dims->size() == 3) return matmul((*dims)[0], (*dims)[2], (*dims)[1]);
  return std::nullopt;
}

// "CIN,COUT,K,SIZE[,GROUPS[,STRIDE]]", K and SIZE each N or HxW: conv() of those; nullopt for
// anything else.
std::optional<BenchCase> conv_spec(const std::string& spec) {
  std::vector<std::array<int64_t, 2>> v;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t end = std::min(spec.find(',', start), spec.size());
    const std::optional<std::vector<int64_t>> field = positive_ints(spec.substr(start, end - start), 'x', 5);
    // HxW for K and SIZE only.
    if (!field || field->size() > 2 || (field->size() == 2 && v.size() != 2 && v.size() != 3)) return std::nullopt;
    v.push_back({field->front(), field->back()});
    start = end + 1;
  }
  if (v.size() < 4 || v.size() > 6) return std::nullopt;
  const int64_t groups = v.size() > 4 ? v[4][0] : 1, stride = v.size() > 5 ? v[5][0] : 1;
  if (v[0][0] % groups != 0 || v[1][0] % groups != 0) return std::nullopt;
  return conv(v[0][0], v[1][0], v[2], v[3], groups, stride);
}

// One arithmetic peak (--peak): a plan of one dispatch of gemm/peak_fma or gemm/coopmat_peak.
struct PeakCase {
  std::string label;
  LayerPlan plan;
  PlanTimer::Buffer in, out;
  double flops = 0;
  std::string why_not;  // non-empty: not run on this device
};

// The device's arithmetic peaks, the ceilings the GEMM tactics are measured against: four-wide
// fp32 and fp16 multiply-adds (gemm/peak_fma.comp) and, where the device has them, 16x16x16
// cooperative-matrix multiply-adds (gemm/coopmat_peak.comp, its KHR build where the device uses
// VK_KHR_cooperative_matrix) from registers alone and with the
// fragment loads from shared memory of gemm/coopmat_vec.comp. Sized for milliseconds on a GPU
// and tens of milliseconds on lavapipe.
std::vector<PeakCase> peak_cases(const vk::DeviceInfo& info) {
  const bool cpu = info.type == vk::DeviceType::Cpu;
  std::vector<PeakCase> peaks;
  const uint32_t fma_groups = cpu ? 16 : 4096, fma_iters = 4096, fma_size = 256;
  // Eight chains of vec4 multiply-adds (a GPU's latency hidden) and three (a CPU driver's registers
  // unspilled: gemm/peak_fma.comp); the device's ceiling is the faster.
  for (const Arith arith : {Arith::F32, Arith::F16}) {
    for (const uint32_t chains : {8u, 3u}) {
      PeakCase c;
      c.label = std::string("fma.") + arith_name(arith) + " (vec4 x" + std::to_string(chains) + ")";
      const StorageType storage = arith == Arith::F32 ? StorageType::F32 : StorageType::F16;
      Dispatch d{std::string("gemm/peak_fma.") + arith_name(arith),
                 {{0, fma_size}, {1, fma_iters}, {2, chains}},
                 {BindingRef::input(0), BindingRef::output(0)},
                 {},
                 {fma_groups, 1, 1}};
      c.plan.dispatches = {d};
      c.in = {storage, 2};
      c.out = {storage, uint64_t(fma_groups) * fma_size};
      c.flops = double(fma_groups) * fma_size * fma_iters * chains * 8;
      if (arith == Arith::F16 && !info.fp16()) c.why_not = "the device has no fp16 arithmetic and storage";
      peaks.push_back(std::move(c));
    }
  }
  const uint32_t cm_groups = 4096, cm_subgroups = 4, cm_iters = 512, lanes = coopmat_subgroup_size(info);
  for (const Arith arith : {Arith::F16, Arith::F16Acc32}) {
    const bool acc32 = arith == Arith::F16Acc32;
    for (const auto& [frags_m, frags_n, shared] :
         {std::tuple{4u, 4u, 0u}, {4u, 4u, 1u}, {4u, 8u, 0u}, {4u, 8u, 1u}, {2u, 2u, 0u}, {2u, 2u, 1u}}) {
      PeakCase c;
      c.label = std::string(info.cooperative_matrix_khr ? "coopmat_khr." : "coopmat.") + arith_name(arith) + " " +
                std::to_string(frags_m) + "x" + std::to_string(frags_n) + (shared ? " shared" : " registers");
      Dispatch d{std::string(info.cooperative_matrix_khr ? "gemm/coopmat_peak_khr." : "gemm/coopmat_peak.") +
                     arith_name(arith),
                 {{0, cm_subgroups * lanes}, {1, frags_m}, {2, frags_n}, {3, cm_iters}, {4, shared}},
                 {BindingRef::input(0), BindingRef::output(0)},
                 {},
                 {cm_groups, 1, 1},
                 lanes};
      c.plan.dispatches = {d};
      c.in = {StorageType::F16, 2ull * 16 * (frags_m + frags_n) * 16};
      c.out = {acc32 ? StorageType::F32 : StorageType::F16, uint64_t(cm_groups) * cm_subgroups * 256};
      c.flops = double(cm_groups) * cm_subgroups * cm_iters * frags_m * frags_n * 16 * 16 * 16 * 2;
      coopmat_usable(info, arith, c.why_not);  // as the gemm.coopmatv* tactics decline
      peaks.push_back(std::move(c));
    }
  }
  return peaks;
}

// The table's rows: a time (median ns) with its rate, a tactic that declined and why, one that failed.
void print_timed(const std::string& label, const std::string& what, double ns, double flops) {
  std::printf("%-28s %-36s %12.3f %10.1f\n", label.c_str(), what.c_str(), ns / 1e6, flops / ns);
}
void print_declined(const std::string& label, const std::string& what, const std::string& why) {
  std::printf("%-28s %-36s %12s %10s   (%s)\n", label.c_str(), what.c_str(), "-", "-", why.c_str());
}
void print_failed(const std::string& label, const std::string& what, const Error& e) {
  std::printf("%-28s %-36s failed: %s\n", label.c_str(), what.c_str(), e.what());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_selector, filter = "*", case_filter = "*";
  int samples = 10;
  double warmup_arg = 0;
  bool per_dispatch = false, no_reference = false, peak = false, no_khr = false;
  std::vector<std::string> matmul_specs, conv_specs;
  CLI::App app{
      "Every tactic of the built-in GEMM and Conv cases (and those added with --matmul and --conv), timed "
      "on a Vulkan device with the builder's own timer; docs/bench.md"};
  app.add_option("--device", device_selector, "The Vulkan device: an index or part of its name");
  app.add_option("--samples", samples, "Timed runs per tactic (the median is printed)")->check(CLI::Range(1, 100000));
  app.add_option("--filter", filter, "Tactics to time: globs separated by commas (one must match)");
  app.add_option("--case", case_filter, "Cases to run: a glob over their labels ('MatMul 4096^3')");
  app.add_flag("--per-dispatch", per_dispatch, "Also time each dispatch of a multi-dispatch plan alone");
  app.add_flag("--vk-disable-cooperative-matrix-khr", no_khr,
               "The tensor-core tactics and peaks through VK_NV_cooperative_matrix where the device has both");
  app.add_flag("--no-reference", no_reference, "Skip the CPU reference backend's timing");
  app.add_flag("--peak", peak,
               "Adds the case 'Peak': the device's arithmetic peaks (fp32 and fp16 multiply-adds, cooperative "
               "matrices from registers and from shared memory), the ceilings of the GEMM tactics");
  CLI::Option* warmup_option =
      app.add_option("--warm-up-ms", warmup_arg,
                     "Least device time of the untimed runs before each tactic's samples (default: the builder's, "
                     "100 ms on GPUs, 0 on CPU devices)")
          ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--matmul", matmul_specs, "Adds a MatMul case: N (N^3) or MxKxN")
      ->check(CLI::Validator(
          [](std::string& s) {
            return matmul_spec(s) ? std::string() : "takes N or MxKxN (positive integers), not '" + s + "'";
          },
          "N|MxKxN"))
      ->allow_extra_args(false);
  app.add_option("--conv", conv_specs,
                 "Adds a Conv case of one image, 'same' padding: CIN,COUT,K,SIZE[,GROUPS[,STRIDE]], K and SIZE "
                 "also as HxW")
      ->check(CLI::Validator(
          [](std::string& s) {
            return conv_spec(s) ? std::string()
                                : "takes CIN,COUT,K,SIZE[,GROUPS[,STRIDE]] (positive integers, K and SIZE also as "
                                  "HxW, groups dividing both channel counts), not '" +
                                      s + "'";
          },
          "CIN,COUT,K,SIZE[,GROUPS[,STRIDE]]"))
      ->allow_extra_args(false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const bool reference = !no_reference;
  const std::optional<double> warmup_ms = warmup_option->count() ? std::optional<double>(warmup_arg) : std::nullopt;
  std::vector<BenchCase> cases = {
      matmul(512, 512, 512),   matmul(1024, 1024, 1024),   matmul(48, 6400, 48),          matmul(384, 100, 384),
      conv(64, 64, 3, 56),     conv(384, 384, 1, 10),      conv(48, 48, 1, 80),           conv(96, 24, 3, 80),
      conv(96, 24, 3, 40),     conv(96, 24, 3, 20),        conv(96, 24, 3, 10),           conv(3, 16, 3, 320, 1, 2),
      conv(48, 48, 3, 80, 48), conv(192, 192, 5, 20, 192), conv_transpose(24, 24, 2, 80), scale_channels(96, 80)};
  for (const std::string& spec : matmul_specs) cases.push_back(*matmul_spec(spec));
  for (const std::string& spec : conv_specs) cases.push_back(*conv_spec(spec));
  try {
    vk::DeviceOptions options;
    options.device = device_selector;
    options.disable_cooperative_matrix_khr = no_khr;
    vk::Context ctx(options);
    const vk::DeviceInfo& info = ctx.device().info();
    const std::vector<std::string> filters = split(filter, ',');
    auto selected = [&](const std::string& name) {
      return std::ranges::any_of(filters, [&](const std::string& g) { return glob_match(g, name); });
    };
    vk::VulkanPlanTimer timer(ctx.device(), warmup_ms);
    std::printf("device: %s (%s), fp16: %s, cooperative matrices: %s, warm-up: %g ms\n\n", info.name.c_str(),
                info.driver_info.c_str(), info.fp16() ? "yes" : "no",
                !info.cooperative_matrix ? "none" : info.cooperative_matrix_khr ? "KHR" : "NV",
                warmup_ms.value_or(vk::VulkanPlanTimer::default_warmup_ms(info)));
    std::printf("%-28s %-36s %12s %10s\n", "case", "tactic", "median ms", "GFLOP/s");

    if (peak && glob_match(case_filter, "Peak")) {
      for (const PeakCase& c : peak_cases(info)) {
        if (!selected(c.label)) continue;
        if (!c.why_not.empty()) {
          print_declined("Peak", c.label, c.why_not);
          continue;
        }
        try {
          print_timed("Peak", c.label, median(timer.time(c.plan, {c.in}, {c.out}, 2, samples, 0)), c.flops);
        } catch (const Error& e) {
          print_failed("Peak", c.label, e);
        }
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    // The convolutions besides the first 3x3 are shapes of PP-OCRv4 det (1x1, depthwise, 3x3 96->24 at
    // the FPN's four scales and the head's ConvTranspose).
    for (const BenchCase& c : cases) {
      if (!glob_match(case_filter, c.label)) continue;
      // CPU reference baseline, same process.
      std::vector<const Tensor*> in;
      for (const Tensor& t : c.inputs) in.push_back(&t);
      if (reference) {
        std::vector<double> cpu;
        for (int r = 0; r < 3; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          (void)run_reference_node(c.node, 17, in);
          cpu.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9);
        }
        print_timed(c.label, "cpu reference backend", median(cpu), c.flops);
      }
      const Shape out_shape = !c.out.empty() ? c.out : run_reference_node(c.node, 17, in)[0].shape();

      for (const Tactic* t : TacticRegistry::builtin().for_op(c.node.op_type)) {
        if (!selected(t->name)) continue;
        if (t->precision() == Precision::FP16 && !info.fp16()) continue;
        std::vector<LayerTensor> inputs, outputs;
        std::vector<PlanTimer::Buffer> in_bufs, out_bufs;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          LayerTensor lt{c.node.inputs[i], DType::Float32, c.inputs[i].shape(),
                         *storage_for(DType::Float32, t->precision()), c.constant[i] ? &c.inputs[i] : nullptr};
          in_bufs.push_back({lt.storage, c.constant[i] ? 0 : uint64_t(lt.size())});
          inputs.push_back(lt);
        }
        LayerTensor out{"y", DType::Float32, out_shape, *storage_for(DType::Float32, t->precision()), nullptr};
        out_bufs.push_back({out.storage, uint64_t(out.size())});
        outputs.push_back(out);
        LayerContext lc{c.node, 17, t->precision(), t->arith, inputs, outputs, info};
        std::string why;
        std::optional<LayerPlan> plan = t->plan(lc, why);
        if (!plan) {
          print_declined(c.label, t->name, why);
          continue;
        }
        try {
          print_timed(c.label, t->name, median(timer.time(*plan, in_bufs, out_bufs, 2, samples, 0)), c.flops);
          // --per-dispatch: each dispatch of a multi-dispatch plan alone (on whatever its scratch holds).
          for (size_t i = 0; per_dispatch && plan->dispatches.size() > 1 && i < plan->dispatches.size(); ++i) {
            LayerPlan one = *plan;
            one.dispatches = {plan->dispatches[i]};
            const double part = median(timer.time(one, in_bufs, out_bufs, 2, samples, 0));
            std::printf("%-28s   dispatch %zu: %-24s %12.3f\n", c.label.c_str(), i, one.dispatches[0].shader.c_str(),
                        part / 1e6);
          }
        } catch (const Error& e) {
          print_failed(c.label, t->name, e);
        }
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
