// Vulkan tactics of the conv family (see runtime/engine/tactic.h): Conv,
// ConvTranspose, ConvInteger, QLinearConv and DeformConv.
//
//   conv.direct              any Conv (N-D, groups, runtime weights): 4 or 8 output
//                            channels x 4 positions per invocation
//   conv.im2col_gemm.<MxP>   im2col into scratch + a GEMM blocked M output channels x
//                            P positions per invocation (1-3 spatial dims)
//   conv.1x1.<MxP>           pointwise Conv as the same GEMM straight on the input (any rank)
//   conv.1x1_block<RxC>      pointwise Conv on gemm/block.comp (register-resident R x C blocks)
//   conv.im2col_block<RxC>   im2col into scratch + gemm/block.comp (one group)
//   conv.1x1_block16x16_wide_a, conv.im2col_block16x16_wide_a  the same on gemm/block_wide_a.comp
//   conv.im2col_splitk32x32 im2col into scratch + the shared-memory core with K split over
//                            workgroups (few outputs, deep K: the GPU form)
//   conv.1x1_smemv<BM>x<BN>, conv.1x1_coopmatv<BM>x<BN>  pointwise Conv on the GPU forms
//                            gemm/smem_vec.comp and gemm/coopmat_vec.comp (tensor cores)
//                            (weights read 8 floats per load: fp32, 64-bit integers, C * kernel % 8 == 0)
//   conv.implicit_gemm<BxB>  Conv on the shared-memory GEMM core (gemm/smem_tile.glsl),
//                            the window read as B is staged (1-3 spatial dims, any groups)
//   conv.transpose_implicit_gemm<BxB>  ConvTranspose the same way (gather form)
//   conv.depthwise           group == C_in (any channel multiplier), 1-3 spatial dims
//   conv.depthwise_wide      the same, 8 outputs along a row per invocation (rows longer than 4)
//   conv.depthwise_tile<R>x8 2-D depthwise (multiplier 1, kernels up to 7x7, strides 1-2): R output
//                            rows x 8 outputs per invocation, each input row read once (vec4s)
//   conv.direct_tile<R>x8    2-D Conv with at most 1024 taps per output (input channels per group x
//                            kernel), kernels up to 5x5, strides 1-2: 8 output channels x R rows x 8
//                            outputs per invocation, each input row read once per input channel
//   conv.winograd_f23        F(2x2, 3x3): 2-D, 3x3, stride 1, dilation 1, group 1; input
//                            transform, 16 GEMMs (the same GEMM), output transform
//   conv.winograd_f23_block<RxC>  the same with the 16 GEMMs on gemm/block.comp (C % 4 == 0)
//   conv.winograd_f43_block<RxC>  F(4x4, 3x3), 36 GEMMs on gemm/block.comp (fp32, C % 4 == 0)
//   conv.transpose_block<RxC> ConvTranspose with kernel == strides (no padding): one GEMM on
//                            gemm/block.comp storing each tap where it lands (depth to space)
//   conv.transpose_gather    ConvTranspose in gather form (N-D, groups, runtime weights)
//   conv.transpose_pair      two kernel == strides ConvTransposes fused into one layer
//                            (graph_optimizer.h, transpose_pair): the one between never stored
//   conv.integer_direct.i32  ConvInteger, exact int32
//   conv.qlinear_direct.i32  QLinearConv, exact int32 sums, requantized as the reference does
//   deform_conv.direct       DeformConv (2-D): each tap sampled bilinearly at its runtime offset
//
// Float tactics come in f32, f16 and f16acc32. Shapes of 1 to 3 spatial dims
// are given to the shaders as 3-D (leading dims of size 1); the window geometry
// comes from runtime/core/window_geometry.h, as the reference's does, so that the
// attributes mean exactly what the oracle says. Constant weights are packed at plan time; runtime weights are
// bound as they are (conv.direct, conv.depthwise, conv.transpose_gather and
// the integer tactics).
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/window_geometry.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_common.h"

namespace vkg {

namespace {

constexpr uint32_t kLocalSize = 64;
// Largest scratch buffer (im2col columns, Winograd tiles) a tactic asks for.
constexpr uint64_t kMaxScratchBytes = uint64_t(64) << 20;
// Output positions per invocation along the last spatial dim (direct, depthwise, integer).
constexpr uint32_t kPixels = 4;

// The geometry of a Conv-like layer. For ConvTranspose the window maps the
// other way: output o gathers input (o + pads_begin - k * dilation) / stride.
struct ConvShape {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  WindowGeometry window;  // in, kernel, out, strides, dilations, pads_begin (spatial dims)

  int64_t cg() const { return in_channels / group; }   // input channels per group
  int64_t mg() const { return out_channels / group; }  // output channels per group
  size_t rank() const { return window.in.size(); }
  int64_t kernel_size() const { return num_elements(window.kernel); }
  int64_t in_size() const { return num_elements(window.in); }
  int64_t out_size() const { return num_elements(window.out); }
};

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

void check_ranks(const Node& node, const Shape& x, const Shape& w) {
  VKG_CHECK(x.size() >= 3, node.describe()
                               << ": input X must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x));
  VKG_CHECK(w.size() == x.size(), node.describe() << ": weights " << shape_to_string(w)
                                                  << " must have the rank of the input " << shape_to_string(x));
}

// Conv, ConvInteger, QLinearConv: X is input x_index, W input w_index.
ConvShape conv_shape(const LayerContext& ctx, size_t x_index, size_t w_index) {
  const Node& node = ctx.node;
  const Shape& x = ctx.input(x_index).shape;
  const Shape& w = ctx.input(w_index).shape;
  check_ranks(node, x, w);
  ConvShape s;
  s.batch = x[0];
  s.in_channels = x[1];
  s.out_channels = w[0];
  s.group = node.attr_int("group", 1);
  VKG_CHECK(s.group >= 1, node.describe() << ": group must be >= 1, got " << s.group);
  VKG_CHECK(x[1] % s.group == 0 && w[0] % s.group == 0 && w[1] * s.group == x[1],
            node.describe() << ": input " << shape_to_string(x) << " and weights " << shape_to_string(w)
                            << " do not match group " << s.group);
  s.window = resolve_window(node, Shape(x.begin() + 2, x.end()), conv_kernel_shape(node, w), false);
  return s;
}

// ConvTranspose: output size and pads along every spatial dim (output_shape, when
// given, fixes the size and the pads follow).
ConvShape conv_transpose_shape(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  check_ranks(node, x, w);
  ConvShape s;
  s.batch = x[0];
  s.in_channels = x[1];
  s.group = node.attr_int("group", 1);
  VKG_CHECK(s.group >= 1, node.describe() << ": group must be >= 1, got " << s.group);
  VKG_CHECK(w[0] == x[1] && x[1] % s.group == 0, node.describe()
                                                     << ": input " << shape_to_string(x) << " and weights "
                                                     << shape_to_string(w) << " do not match group " << s.group);
  s.out_channels = w[1] * s.group;

  s.window = resolve_transpose_window(node, Shape(x.begin() + 2, x.end()), conv_kernel_shape(node, w));
  return s;
}

void check_output(const LayerContext& ctx, const ConvShape& s) {
  Shape expected{s.batch, s.out_channels};
  expected.insert(expected.end(), s.window.out.begin(), s.window.out.end());
  VKG_CHECK(ctx.output(0).shape == expected, ctx.node.describe()
                                                 << ": output shape " << shape_to_string(ctx.output(0).shape)
                                                 << " differs from the computed " << shape_to_string(expected));
}

bool fits_scratch(const LayerContext& ctx, uint64_t bytes, const char* what, std::string& why_not) {
  uint64_t limit = kMaxScratchBytes;
  if (ctx.device.max_storage_buffer_range != 0) limit = std::min<uint64_t>(limit, ctx.device.max_storage_buffer_range);
  if (bytes > limit) {
    why_not = std::string(what) + " would need " + std::to_string(bytes) + " bytes of scratch, more than the " +
              std::to_string(limit) + " allowed";
    return false;
  }
  return true;
}

// A packed weight in storage form: float32 or float16 values (never empty).
Tensor float_weight(std::vector<float> values, StorageType s) {
  if (values.empty()) values.push_back(0.0f);
  Tensor t = Tensor::from_vector<float>({int64_t(values.size())}, values);
  return s == StorageType::F16 ? t.cast(DType::Float16) : t;
}

Tensor int_weight(std::vector<int32_t> values) {
  if (values.empty()) values.push_back(0);
  return Tensor::from_vector<int32_t>({int64_t(values.size())}, values);
}

std::vector<float> float_values(const Tensor& t) {
  const Tensor f = t.dtype() == DType::Float32 ? t : t.cast(DType::Float32);
  return std::vector<float>(f.data<float>(), f.data<float>() + f.size());
}

std::vector<int32_t> int_values(const Tensor& t) {
  std::vector<int32_t> out;
  for (int64_t v : t.to_int64s()) out.push_back(int32_t(v));
  return out;
}

// The binding of optional input `index` (a bias or zero point) and whether it is
// present; an absent one binds a one-element zero weight, as every binding must exist.
std::pair<BindingRef, bool> bind_optional(const LayerContext& ctx, LayerPlan& plan, std::optional<size_t> index,
                                          StorageType s) {
  if (index && ctx.has_input(*index)) return {bind_input(ctx, plan, *index), true};
  if (s == StorageType::I32) return {add_weight(plan, int_weight({})), false};
  return {add_weight(plan, float_weight({}, s)), false};
}

// Weights of a Conv (ONNX [M][cg][K]) or ConvTranspose ([C][mg][K]) as
// [group][blocks][cg][K][block]: `block` output channels of a group side by
// side (vec4 loads), zero past mg.
template <class T>
std::vector<T> pack_channel_blocks(const std::vector<T>& w, const ConvShape& s, bool transpose, int64_t block) {
  const int64_t cg = s.cg(), mg = s.mg(), k = s.kernel_size(), blocks = (mg + block - 1) / block;
  std::vector<T> out(size_t(s.group * blocks * cg * k * block), T(0));
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t kk = 0; kk < k; ++kk) {
          const int64_t src = transpose ? ((g * cg + ci) * mg + m) * k + kk : ((g * mg + m) * cg + ci) * k + kk;
          out[size_t((((g * blocks + m / block) * cg + ci) * k + kk) * block + m % block)] = w[size_t(src)];
        }
  return out;
}

// The 3-D form of a window of 1 to 3 spatial dims (size-1 leading dims).
struct Window3 {
  std::array<uint32_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int32_t, 3> strides{1, 1, 1}, dilations{1, 1, 1}, pads{0, 0, 0};
};

Window3 window3(const WindowGeometry& g) {
  Window3 w;
  const size_t r = g.in.size(), off = 3 - r;
  for (size_t i = 0; i < r; ++i) {
    w.in[off + i] = uint32_t(g.in[i]);
    w.out[off + i] = uint32_t(g.out[i]);
    w.kernel[off + i] = uint32_t(g.kernel[i]);
    w.strides[off + i] = int32_t(g.strides[i]);
    w.dilations[off + i] = int32_t(g.dilations[i]);
    w.pads[off + i] = int32_t(g.pads_begin[i]);
  }
  return w;
}

uint32_t word(int32_t v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Appends the 18 geometry words in, out, kernel, strides, dilations, pads.
void push_window(std::vector<uint32_t>& push, const Window3& w) {
  push.insert(push.end(), w.in.begin(), w.in.end());
  push.insert(push.end(), w.out.begin(), w.out.end());
  push.insert(push.end(), w.kernel.begin(), w.kernel.end());
  for (const auto* a : {&w.strides, &w.dilations, &w.pads})
    for (int32_t v : *a) push.push_back(word(v));
}

Dispatch dispatch(const LayerContext& ctx, std::string shader, std::vector<SpecValue> spec,
                  std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t invocations) {
  Dispatch d;
  d.shader = std::move(shader);
  d.spec = {{0, kLocalSize}};
  d.spec.insert(d.spec.end(), spec.begin(), spec.end());
  d.bindings = std::move(bindings);
  d.push = std::move(push);
  d.groups = linear_groups(invocations, kLocalSize, ctx.device);
  return d;
}

bool fits_invocations(uint64_t invocations, std::string& why_not) {
  if (invocations > uint64_t(std::numeric_limits<int32_t>::max())) {
    why_not = "too many invocations for 32-bit shader indices";
    return false;
  }
  return true;
}

bool within_3d(const ConvShape& s, std::string& why_not) {
  if (s.rank() > 3) {
    why_not = "serves 1 to 3 spatial dims, the layer has " + std::to_string(s.rank());
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// conv.direct and conv.transpose_gather

// The any-rank fallback (conv/direct_nd.comp): raw weights, geometry in an int table.
std::optional<LayerPlan> plan_direct_nd(const LayerContext& ctx, const ConvShape& s, bool transpose,
                                        std::string& why_not) {
  LayerPlan plan;
  const StorageType st = ctx.input(0).storage;
  const BindingRef w = bind_input(ctx, plan, 1);
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  std::vector<int32_t> geo{int32_t(s.rank())};
  const WindowGeometry& g = s.window;
  for (size_t d = 0; d < s.rank(); ++d) {
    for (int64_t v : {g.in[d], g.out[d], g.kernel[d], g.strides[d], g.dilations[d], g.pads_begin[d]})
      geo.push_back(int32_t(v));
  }
  const BindingRef geometry = add_weight(plan, int_weight(geo));
  const int64_t k = s.kernel_size();
  const uint32_t w_stride_m = uint32_t(transpose ? k : s.cg() * k);
  const uint32_t w_stride_c = uint32_t(transpose ? s.mg() * k : k);
  const uint64_t invocations = uint64_t(s.batch * s.out_channels * s.out_size());
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(
      dispatch(ctx, ctx.shader("conv/direct_nd"), {{1, has_bias}, {2, transpose}},
               {BindingRef::input(0), w, bias, geometry, BindingRef::output(0)},
               {uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.out_channels), uint32_t(s.group), w_stride_m,
                w_stride_c, uint32_t(s.in_size()), uint32_t(s.out_size()), uint32_t(k)},
               invocations));
  return plan;
}

// Whether an invocation looping once per tap (input channel of its group x kernel position)
// stays within the device's loop iteration limit: conv.direct, conv.transpose_gather and the
// GEMM of conv/gemm.comp (conv.im2col_gemm, conv.1x1) loop so, and came out wrong on lavapipe
// at 73,728 and 80,000 taps; the blocked, tiled and Winograd forms were right.
bool taps_fit(const LayerContext& ctx, const ConvShape& s, std::string& why_not) {
  return loops_fit_device(ctx, uint64_t(s.cg()) * uint64_t(s.kernel_size()), 2, why_not);
}

std::optional<LayerPlan> plan_direct(const LayerContext& ctx, const ConvShape& s, bool transpose,
                                     std::string& why_not) {
  if (!taps_fit(ctx, s, why_not)) return std::nullopt;
  if (s.rank() > 3) return plan_direct_nd(ctx, s, transpose, why_not);
  LayerPlan plan;
  const StorageType st = ctx.input(0).storage;
  const LayerTensor& w_in = ctx.input(1);
  const uint32_t out_channels = s.mg() >= 8 ? 8 : 4;  // per invocation
  const bool packed = w_in.is_constant();
  BindingRef w;
  if (packed) {
    w = add_weight(plan,
                   float_weight(pack_channel_blocks(float_values(*w_in.constant), s, transpose, out_channels), st));
    if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights",
                      why_not))
      return std::nullopt;
  } else {
    w = BindingRef::input(1);
  }
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  const Window3 win = window3(s.window);
  const int64_t k = s.kernel_size();
  std::vector<uint32_t> push{uint32_t(s.batch),
                             uint32_t(s.in_channels),
                             uint32_t(s.out_channels),
                             uint32_t(s.group),
                             uint32_t(transpose ? k : s.cg() * k),
                             uint32_t(transpose ? s.mg() * k : k)};
  push_window(push, win);
  // Positions per invocation along the last dim: for ConvTranspose, of one residue class of the stride.
  const uint64_t stride = uint64_t(win.strides[2]);
  const uint64_t row = transpose ? (win.out[2] + stride - 1) / stride : win.out[2];
  const uint32_t pixels = uint32_t(std::min<uint64_t>(kPixels, row));
  const uint64_t row_blocks = transpose ? stride * ((row + pixels - 1) / pixels) : (row + pixels - 1) / pixels;
  const uint64_t invocations =
      uint64_t(s.batch * s.group * ((s.mg() + out_channels - 1) / out_channels)) * win.out[0] * win.out[1] * row_blocks;
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(dispatch(ctx, ctx.shader("conv/direct"),
                                     {{1, pixels}, {2, packed}, {3, has_bias}, {4, transpose}, {5, out_channels}},
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)}, push, invocations));
  return plan;
}

std::optional<LayerPlan> plan_conv_direct(const LayerContext& ctx, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  return plan_direct(ctx, s, false, why_not);
}

// False (`why_not` filled) for a layer of two ConvTransposes (graph_optimizer.h, transpose_pair),
// which only conv.transpose_pair serves.
bool single_transpose(const LayerContext& ctx, std::string& why_not) {
  if (!transpose_pair(ctx.node)) return true;
  why_not = "the layer holds two ConvTransposes (conv.transpose_pair serves it)";
  return false;
}

std::optional<LayerPlan> plan_transpose_gather(const LayerContext& ctx, std::string& why_not) {
  if (!single_transpose(ctx, why_not) || !float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_transpose_shape(ctx);
  check_output(ctx, s);
  return plan_direct(ctx, s, true, why_not);
}

// ---------------------------------------------------------------------------
// conv.im2col_gemm and conv.1x1: the GEMM of conv/gemm.comp

struct GemmBlocking {
  uint32_t tile_m = 8;  // output channels per invocation
  uint32_t tile_p = 8;  // positions per invocation
};

// Weights [M][cg][K] as the GEMM's A: [group][cg * K][mg_pad].
std::vector<float> pack_gemm_weights(const std::vector<float>& w, const ConvShape& s, int64_t mg_pad) {
  const int64_t kdim = s.cg() * s.kernel_size(), mg = s.mg();
  std::vector<float> out(size_t(s.group * kdim * mg_pad), 0.0f);
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t k = 0; k < kdim; ++k) out[size_t((g * kdim + k) * mg_pad + m)] = w[size_t((g * mg + m) * kdim + k)];
  return out;
}

// One conv/gemm.comp dispatch: per batch n and group g,
//   Y[n][g * mg + m][pos] = bias + sum over k < kdim of A[g][k][m] * B(n, g, k, pos)
// with B's element at n * b_batch + g * b_group + k * ldb + pos.
struct GemmShape {
  int64_t batch = 1, group = 1, mg = 0, mg_pad = 0, positions = 0, kdim = 0;
  int64_t ldb = 0, b_group = 0, b_batch = 0;
  bool aligned_b = false;  // ldb, b_group and b_batch multiples of 4; rows readable up to positions rounded up to 4
};

std::optional<Dispatch> gemm_dispatch(const LayerContext& ctx, const GemmShape& g, GemmBlocking blocking, BindingRef a,
                                      BindingRef b, BindingRef bias, bool has_bias, BindingRef y,
                                      std::string& why_not) {
  const uint64_t invocations = uint64_t(g.batch * g.group * (g.mg_pad / blocking.tile_m)) *
                               uint64_t((g.positions + blocking.tile_p - 1) / blocking.tile_p);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  // The largest of A (packed weights) and B (the input or the im2col columns) bounds the texel views.
  const uint64_t a_elements = uint64_t(g.group * g.kdim * g.mg_pad);
  const uint64_t b_elements =
      uint64_t(g.batch) * uint64_t(std::max<int64_t>(g.b_batch, g.group * g.b_group + g.kdim * g.ldb));
  return dispatch(ctx, ctx.texel_shader("conv/gemm", std::max(a_elements, b_elements)),
                  {{1, blocking.tile_m},
                   {2, blocking.tile_p},
                   {3, g.aligned_b},
                   {4, has_bias},
                   {5, g.positions % 4 == 0 ? 1u : 0u}},
                  {a, b, bias, y},
                  {uint32_t(g.batch), uint32_t(g.group), uint32_t(g.mg), uint32_t(g.mg_pad), uint32_t(g.positions),
                   uint32_t(g.kdim), uint32_t(g.ldb), uint32_t(g.b_group), uint32_t(g.b_batch)},
                  invocations);
}

// The GEMM of a Conv over B: packs the constant weights as A, binds the bias
// and writes the layer output.
std::optional<Dispatch> conv_gemm_dispatch(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s,
                                           GemmBlocking blocking, BindingRef b, GemmShape shape, std::string& why_not) {
  if (!taps_fit(ctx, s, why_not)) return std::nullopt;
  const StorageType st = ctx.input(0).storage;
  const LayerTensor& w_in = ctx.input(1);
  if (!w_in.is_constant()) {
    why_not = "needs constant weights to pack (conv.direct serves runtime weights)";
    return std::nullopt;
  }
  shape.batch = s.batch;
  shape.group = s.group;
  shape.mg = s.mg();
  shape.mg_pad = round_up(s.mg(), blocking.tile_m);
  shape.positions = s.out_size();
  shape.kdim = s.cg() * s.kernel_size();
  const BindingRef a =
      add_weight(plan, float_weight(pack_gemm_weights(float_values(*w_in.constant), s, shape.mg_pad), st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights", why_not))
    return std::nullopt;
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  return gemm_dispatch(ctx, shape, blocking, a, b, bias, has_bias, BindingRef::output(0), why_not);
}

// The im2col columns of a Conv into scratch 0, [batch][C * kernel][positions rounded up to 4]
// (rows of a group consecutive; the dispatch added to `plan`): the row stride of B for the GEMM
// after it, or nullopt (why_not filled).
std::optional<int64_t> add_im2col(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s, StorageType st,
                                  std::string& why_not) {
  if (!within_3d(s, why_not)) return std::nullopt;
  const int64_t p4 = round_up(s.out_size(), 4);
  const int64_t col_rows = s.in_channels * s.kernel_size();
  const uint64_t col_elements = uint64_t(s.batch) * uint64_t(col_rows) * uint64_t(p4);
  if (!fits_scratch(ctx, col_elements * storage_element_bytes(st), "the im2col buffer", why_not)) return std::nullopt;
  if (!fits_invocations(col_elements / 4, why_not)) return std::nullopt;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, col_elements * storage_element_bytes(st)));
  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.group)};
  push_window(push, win);
  // im2col moves bits: the fp16 variant serves both fp16 arithmetics.
  const bool texel = ctx.texel_reads(uint64_t(ctx.input(0).size()));
  const std::string im2col =
      std::string(texel ? "conv/im2col_texel" : "conv/im2col") + (st == StorageType::F16 ? ".f16" : ".f32");
  plan.dispatches.push_back(dispatch(
      ctx, im2col,
      {{1, win.out[0]}, {2, win.out[1]}, {3, win.out[2]}, {4, win.kernel[0]}, {5, win.kernel[1]}, {6, win.kernel[2]}},
      {BindingRef::input(0), BindingRef::scratch(0)}, push, col_elements / 4));
  return p4;
}

// The start of every im2col tactic: the layer's shape and a plan holding the im2col dispatch (the
// columns in scratch 0, rows of p4 positions); nullopt (why_not filled) where it cannot be made.
struct Im2colStart {
  ConvShape s;
  LayerPlan plan;
  int64_t p4 = 0;
};
std::optional<Im2colStart> start_im2col(const LayerContext& ctx, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  Im2colStart start{conv_shape(ctx, 0, 1), {}, 0};
  check_output(ctx, start.s);
  const std::optional<int64_t> p4 = add_im2col(ctx, start.plan, start.s, *st, why_not);
  if (!p4) return std::nullopt;
  start.p4 = *p4;
  return start;
}

std::optional<LayerPlan> plan_im2col_gemm(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  const int64_t col_rows = s.in_channels * s.kernel_size();  // over all groups
  GemmShape shape;
  shape.ldb = p4;
  shape.b_group = s.cg() * s.kernel_size() * p4;
  shape.b_batch = col_rows * p4;
  shape.aligned_b = true;
  std::optional<Dispatch> gemm = conv_gemm_dispatch(ctx, plan, s, blocking, BindingRef::scratch(0), shape, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return std::move(plan);
}

bool is_pointwise(const WindowGeometry& g) {
  for (size_t i = 0; i < g.in.size(); ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) return false;
  }
  return true;
}

std::optional<LayerPlan> plan_pointwise(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window)) {
    why_not = "serves 1x1 kernels with stride 1 and no padding only";
    return std::nullopt;
  }
  LayerPlan plan;
  const int64_t positions = s.out_size();
  GemmShape shape;
  shape.ldb = positions;
  shape.b_group = s.cg() * positions;
  shape.b_batch = s.in_channels * positions;
  shape.aligned_b = positions % 4 == 0;
  std::optional<Dispatch> gemm = conv_gemm_dispatch(ctx, plan, s, blocking, BindingRef::input(0), shape, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.1x1_block and conv.im2col_block: the GEMM of gemm/block.comp (the
// interface of shaders/gemm/common.glsl), whose accumulator blocks stay in
// registers. A is the weights as stored ([M][C * K]: vec4 runs along k need
// C * K % 4 == 0), B the input (1x1) or the im2col columns, per batch
// [C * K][positions]; C is the bias along M; Y is the layer output.

struct BlockShape {
  uint32_t rows = 16, col_vecs = 4;
  bool wide_a = false;  // gemm/block_wide_a: A read eight floats per load (fp32, device feature int64)
};

// gemm/block.comp on the product `p`: A and B as bound, C the bias along M,
// Y the layer output, stored densely or through a depth-to-space `map`.
std::optional<Dispatch> block_dispatch(const LayerContext& ctx, LayerPlan& plan, const Product& p, BlockShape block,
                                       BindingRef a, BindingRef b, std::pair<BindingRef, bool> bias,
                                       const std::array<uint32_t, 6>& map, std::string& why_not,
                                       BindingRef y = BindingRef::output(0)) {
  const int64_t columns = ((p.N + 3) / 4 + block.col_vecs - 1) / block.col_vecs;
  const uint32_t local = column_local_size(columns, kLocalSize, ctx.device);
  const auto groups = gemm_grid_groups(columns, local, (p.M + block.rows - 1) / block.rows, p.batches, ctx.device);
  if (!groups) {
    why_not = "too many positions for one dispatch";
    return std::nullopt;
  }
  if (block.wide_a && !block_wide_a_fits(p, ctx.device, why_not)) return std::nullopt;
  Dispatch d;
  d.shader = block_shader(ctx, p, block.wide_a);
  d.spec = block_spec(d.shader, local, block.rows, block.col_vecs, p, block_c_mode(bias.second, /*c_sm=*/1, /*c_sn=*/0),
                      map);
  d.bindings = {a, b, bias.first, y, add_weight(plan, int_weight({0}))};
  d.push = gemm_float_push(p, /*c_sm=*/1, /*c_sn=*/0, bias.second ? kGemmFlagHasC : 0u, 1.0f, 1.0f);
  d.groups = *groups;
  return d;
}

// The constant weights of a one-group Conv, as stored, bound as A of the product
// Y[n, m, p] = sum_k W[m, k] * B[n, k, p] (+ bias[m]), A shared by every batch, B's rows `ldb` and
// its batches `b_batch` apart; nullopt (why_not filled) when the weights exceed a binding.
std::optional<std::pair<BindingRef, Product>> weights_product(const LayerContext& ctx, LayerPlan& plan,
                                                              const ConvShape& s, int64_t ldb, int64_t b_batch,
                                                              std::string& why_not) {
  const BindingRef a = add_weight(plan, float_weight(float_values(*ctx.input(1).constant), ctx.input(0).storage));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  const int64_t kdim = s.cg() * s.kernel_size();
  Product p;
  p.M = s.out_channels, p.N = s.out_size(), p.K = kdim, p.batches = s.batch;
  p.a_bs = 0, p.a_sm = kdim, p.a_sk = 1;
  p.b_bs = b_batch, p.b_sk = ldb, p.b_sn = 1;
  return std::pair{a, p};
}

// The bindings and push constants of the GEMM of weights_product on the interface of
// shaders/gemm/common.glsl: A the weights `a`, B `b`, C the layer's bias along M (input 2, where
// it has one), Y the layer output.
void bind_weights_gemm(const LayerContext& ctx, LayerPlan& plan, BindingRef a, BindingRef b, const Product& p,
                       Dispatch& d) {
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, ctx.input(0).storage);
  d.bindings = {a, b, bias, BindingRef::output(0), add_weight(plan, int_weight({0}))};
  d.push = gemm_float_push(p, /*c_sm=*/1, /*c_sn=*/0, has_bias ? kGemmFlagHasC : 0u, 1.0f, 1.0f);
}

std::optional<Dispatch> block_gemm_dispatch(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s,
                                            BlockShape block, BindingRef b, int64_t ldb, int64_t b_batch,
                                            std::string& why_not) {
  if (!ctx.input(1).is_constant() || s.group != 1 || s.cg() * s.kernel_size() % 4 != 0) {
    why_not = "needs constant weights, one group and C * kernel size % 4 == 0";
    return std::nullopt;
  }
  const auto product = weights_product(ctx, plan, s, ldb, b_batch, why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  return block_dispatch(ctx, plan, p, block, a, b, bind_optional(ctx, plan, 2, ctx.input(0).storage), {}, why_not);
}

std::optional<LayerPlan> plan_pointwise_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window) || s.out_size() % 4 != 0) {
    why_not = "serves 1x1 kernels with stride 1, no padding and a multiple of 4 positions only";
    return std::nullopt;
  }
  LayerPlan plan;
  std::optional<Dispatch> gemm = block_gemm_dispatch(ctx, plan, s, block, BindingRef::input(0), s.out_size(),
                                                     s.in_channels * s.out_size(), why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return plan;
}

// conv.1x1_smemv* and conv.1x1_coopmatv*: the pointwise GEMM of plan_pointwise_block (weights as
// A, the input as B, the bias as C along M) on the GPU forms gemm/smem_vec.comp (`smem`) or
// gemm/coopmat_vec.comp (`coop`).
std::optional<LayerPlan> plan_pointwise_gpu(const LayerContext& ctx, const SmemTile* smem, const CoopTile* coop,
                                            std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window) || s.group != 1 || !ctx.input(1).is_constant()) {
    why_not = "serves 1x1 kernels with stride 1, no padding, one group and constant weights only";
    return std::nullopt;
  }
  LayerPlan plan;
  const auto product = weights_product(ctx, plan, s, s.out_size(), s.in_channels * s.out_size(), why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  Dispatch d;
  if (smem ? !smem_vec_dispatch(ctx, p, *smem, d, why_not) : !coopmat_vec_dispatch(ctx, p, *coop, d, why_not))
    return std::nullopt;
  bind_weights_gemm(ctx, plan, a, BindingRef::input(0), p, d);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<LayerPlan> plan_im2col_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  std::optional<Dispatch> gemm = block_gemm_dispatch(ctx, plan, s, block, BindingRef::scratch(0), p4,
                                                     s.in_channels * s.kernel_size() * p4, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return std::move(plan);
}

// conv.im2col_splitk32x32: the im2col columns, then the shared-memory core with K split over
// workgroups (gemm.smem32x32_splitk's form). For Convs of few outputs and many taps, such as
// PP-OCRv4 rec's 1x3 Convs over 480 channels at 40 positions: the register-block forms give such
// a product a few dozen invocations, each summing the whole depth (0.35 ms on an H200).
std::optional<LayerPlan> plan_im2col_splitk(const LayerContext& ctx, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  if (!ctx.input(1).is_constant() || s.group != 1) {
    why_not = "needs constant weights and one group";
    return std::nullopt;
  }
  const auto product = weights_product(ctx, plan, s, p4, s.in_channels * s.kernel_size() * p4, why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  Dispatch d;
  bind_weights_gemm(ctx, plan, a, BindingRef::scratch(0), p, d);
  if (!smem_core_dispatches(ctx, p, SmemTile{32, 32, 32, 4, 4}, /*split_k=*/true, std::move(d), plan, why_not))
    return std::nullopt;
  return std::move(plan);
}

// conv.transpose_block<RxC>: ConvTranspose whose kernel equals its strides,
// without padding or dilation (every output position gets exactly one tap of
// one input position: the upsampling "deconvolution" of segmentation heads)
// is one GEMM, Y'[(m, tap)][p] = sum_c W[c][m][tap] * X[c][p], on
// gemm/block.comp, whose store puts row (m, tap), column p where the tap
// lands in the output (kDepthToSpace).
std::optional<LayerPlan> plan_transpose_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  if (!single_transpose(ctx, why_not)) return std::nullopt;
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_transpose_shape(ctx);
  check_output(ctx, s);
  if (!within_3d(s, why_not)) return std::nullopt;
  const WindowGeometry& g = s.window;
  for (size_t d = 0; d < s.rank(); ++d) {
    if (g.kernel[d] != g.strides[d] || g.dilations[d] != 1 || g.pads_begin[d] != 0 ||
        g.out[d] != g.in[d] * g.strides[d]) {
      why_not = "serves kernels equal to their strides, without padding, dilation or output padding";
      return std::nullopt;
    }
  }
  const LayerTensor& w_in = ctx.input(1);
  const int64_t taps = s.kernel_size(), positions = s.in_size(), channels = s.in_channels;
  if (s.group != 1 || !w_in.is_constant() || (ctx.has_input(2) && !ctx.input(2).is_constant()) ||
      channels % 4 != 0 || positions % 4 != 0) {
    why_not = "needs one group, constant weights and bias, input channels % 4 == 0 and input positions % 4 == 0";
    return std::nullopt;
  }
  // A[(m, tap)][c] = W[c][m][tap]; the bias repeats over the taps of its channel.
  const std::vector<float> w = float_values(*w_in.constant);
  const int64_t rows = s.out_channels * taps;
  std::vector<float> a(size_t(rows * channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t r = 0; r < rows; ++r) a[size_t(r * channels + c)] = w[size_t(c * rows + r)];
  LayerPlan plan;
  const BindingRef a_ref = add_weight(plan, float_weight(std::move(a), *st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  std::pair<BindingRef, bool> bias;
  if (ctx.has_input(2)) {
    std::vector<float> expanded;
    for (float v : float_values(*ctx.input(2).constant)) expanded.insert(expanded.end(), size_t(taps), v);
    bias = {add_weight(plan, float_weight(std::move(expanded), *st)), true};
  } else {
    bias = bind_optional(ctx, plan, std::nullopt, *st);
  }
  Product p;
  p.M = rows, p.N = positions, p.K = channels, p.batches = s.batch;
  p.a_bs = 0, p.a_sm = channels, p.a_sk = 1;
  p.b_bs = channels * positions, p.b_sk = positions, p.b_sn = 1;
  const Window3 win = window3(g);
  const std::array<uint32_t, 6> map = {win.in[0], win.in[1], win.in[2], win.kernel[0], win.kernel[1], win.kernel[2]};
  std::optional<Dispatch> d = block_dispatch(ctx, plan, p, block, a_ref, BindingRef::input(0), bias, map, why_not);
  if (!d) return std::nullopt;
  plan.dispatches.push_back(std::move(*d));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.transpose_pair: two upsampling ConvTransposes fused into one layer (graph_optimizer.h,
// transpose_pair) on conv/transpose_pair.comp, the intermediate tensor kept in registers.

constexpr int64_t kPairMaxHidden = 128;  // C1: the first ConvTranspose's outputs an invocation holds per input
constexpr int64_t kPairMaxOutputs = 64;  // 4 * kh2 * kw2: the outputs an invocation writes per channel

std::optional<LayerPlan> plan_transpose_pair(const LayerContext& ctx, std::string& why_not) {
  const std::optional<TransposePair> pair = transpose_pair(ctx.node);
  if (!pair) {
    why_not = "serves layers of two ConvTransposes only (graph_optimizer.h, transpose_pair)";
    return std::nullopt;
  }
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(
      ctx.inputs.size() == 5 && x.shape.size() == 4 && ctx.input(1).shape.size() == 4 && ctx.input(3).shape.size() == 4,
      ctx.node.describe() << ": a pair of ConvTransposes takes X, W1, B1, W2 and B2 (2-D)");
  const Shape& w1 = ctx.input(1).shape;
  const Shape& w2 = ctx.input(3).shape;
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t c1 = w1[1], c2 = w2[1];
  const Shape out = {n, c2, h * w1[2] * w2[2], w * w1[3] * w2[3]};
  VKG_CHECK(w1[0] == c && w2[0] == c1 && ctx.input(2).size() == c1 && ctx.input(4).size() == c2 &&
                pair->kernel == std::vector<int64_t>(w2.begin() + 2, w2.end()) && ctx.output(0).shape == out,
            ctx.node.describe() << ": weights " << shape_to_string(w1) << " and " << shape_to_string(w2)
                                << " do not chain from " << shape_to_string(x.shape) << " to "
                                << shape_to_string(ctx.output(0).shape));
  for (size_t i = 1; i < 5; ++i) {
    if (!ctx.input(i).is_constant()) {
      why_not = "needs constant weights and biases";
      return std::nullopt;
    }
  }
  const int64_t taps1 = w1[2] * w1[3];
  if (w % 4 != 0 || c1 > kPairMaxHidden || 4 * w2[2] * w2[3] > kPairMaxOutputs) {
    why_not = "serves input rows of a multiple of 4, C1 <= " + std::to_string(kPairMaxHidden) +
              " and 4 * kh2 * kw2 <= " + std::to_string(kPairMaxOutputs) + " only";
    return std::nullopt;
  }
  const uint64_t invocations = uint64_t(n * h * (w / 4) * taps1);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;  // float_storage checked the tensors
  LayerPlan plan;
  // W1 [C][C1][taps] -> [C][taps][C1]: one tap's C1 weights a run.
  const std::vector<float> w1_values = float_values(*ctx.input(1).constant);
  std::vector<float> packed(w1_values.size());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t m = 0; m < c1; ++m)
      for (int64_t t = 0; t < taps1; ++t)
        packed[size_t((ci * taps1 + t) * c1 + m)] = w1_values[size_t((ci * c1 + m) * taps1 + t)];
  std::vector<BindingRef> bindings = {BindingRef::input(0), add_weight(plan, float_weight(std::move(packed), *st))};
  for (size_t i = 2; i < 5; ++i) bindings.push_back(bind_input(ctx, plan, i));
  bindings.push_back(BindingRef::output(0));
  const FusedActivation& inner = pair->inner;
  plan.dispatches.push_back(dispatch(
      ctx,
      ctx.texel_shader("conv/transpose_pair", uint64_t(std::max({x.size(), ctx.input(1).size(), ctx.input(3).size()}))),
      {{1, uint32_t(c1)},
       {2, uint32_t(w1[2])},
       {3, uint32_t(w1[3])},
       {4, uint32_t(w2[2])},
       {5, uint32_t(w2[3])},
       {6, uint32_t(inner.kind)},
       {7, std::bit_cast<uint32_t>(inner.alpha)},
       {8, std::bit_cast<uint32_t>(inner.beta)},
       {9, std::bit_cast<uint32_t>(inner.post_scale)},
       {10, std::bit_cast<uint32_t>(inner.post_shift)}},
      std::move(bindings), {uint32_t(n), uint32_t(c), uint32_t(h), uint32_t(w), uint32_t(c2)}, invocations));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.implicit_gemm<BM>x<BN> and conv.transpose_implicit_gemm<BM>x<BN>: the
// shared-memory GEMM core (gemm/smem_tile.glsl) with B read through the window
// as the GEMM stages it (conv/implicit_gemm.comp): no im2col buffer, any
// groups, runtime or constant weights as stored.

std::optional<LayerPlan> plan_implicit_gemm(const LayerContext& ctx, SmemTile tile, bool transpose,
                                            std::string& why_not) {
  if (transpose && !single_transpose(ctx, why_not)) return std::nullopt;
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = transpose ? conv_transpose_shape(ctx) : conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!within_3d(s, why_not)) return std::nullopt;
  if (!transpose && s.mg() < 4) {
    // A depthwise Conv as 64-row tiles of one row each: 2 s for a 3x3 48-channel 80x80 one on
    // lavapipe against 1 ms on conv.depthwise_tile, and a GPU build's first candidates.
    why_not = "serves 4 or more output channels per group (the depthwise and narrow-group forms serve the rest)";
    return std::nullopt;
  }
  if (!fits_invocations(uint64_t(s.batch * s.out_channels) * uint64_t(s.out_size()), why_not)) return std::nullopt;
  const int64_t kdim = s.cg() * s.kernel_size();
  LayerPlan plan;
  const BindingRef w = bind_input(ctx, plan, 1);
  if (!plan.weights.empty() &&
      !fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  std::vector<uint32_t> push{uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.group)};
  push_window(push, window3(s.window));
  push.insert(push.end(), {uint32_t(s.mg()), uint32_t(kdim), has_bias ? 1u : 0u});
  std::optional<std::vector<SpecValue>> spec =
      smem_tile_spec(tile, !transpose && kdim % 4 == 0, false, 1, ctx.arith, ctx.device, why_not);
  if (!spec) return std::nullopt;
  spec->push_back({9, transpose ? 1u : 0u});
  const auto groups = smem_tile_groups(tile, s.mg(), s.out_size(), s.batch * s.group, ctx.device, why_not);
  if (!groups) return std::nullopt;
  Dispatch d;
  d.shader = ctx.shader("conv/implicit_gemm");
  d.spec = std::move(*spec);
  d.bindings = {BindingRef::input(0), w, bias, BindingRef::output(0)};
  d.push = std::move(push);
  d.groups = *groups;
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.depthwise

std::optional<LayerPlan> plan_depthwise(const LayerContext& ctx, uint32_t max_pixels, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (s.group != s.in_channels) {
    why_not = "serves group == input channels only (group " + std::to_string(s.group) + ", " +
              std::to_string(s.in_channels) + " channels)";
    return std::nullopt;
  }
  if (!within_3d(s, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef w = bind_input(ctx, plan, 1);  // [M][1][K] is already the shader's [M][K]
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.out_channels)};
  push_window(push, win);
  const uint32_t pixels = std::min<uint32_t>(max_pixels, win.out[2]);
  if (max_pixels > kPixels && pixels <= kPixels) {
    why_not = "rows of " + std::to_string(win.out[2]) + " outputs leave nothing to widen (conv.depthwise serves them)";
    return std::nullopt;
  }
  const uint64_t invocations =
      uint64_t(s.batch * s.out_channels) * win.out[0] * win.out[1] * ((win.out[2] + pixels - 1) / pixels);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(dispatch(ctx, ctx.shader("conv/depthwise"), {{1, pixels}, {2, has_bias}},
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)}, push, invocations));
  return plan;
}

// The row-tile shaders (conv/depthwise_tile.comp, conv/direct_tile.comp): 2-D, kernels
// up to `max_kernel`, strides 1 or 2, no dilation, rows of more than 4 outputs, and
// the row span of 8 outputs within 24 inputs.
bool tile_geometry(const ConvShape& s, int64_t max_kernel, std::string& why_not) {
  if (s.rank() != 2) {
    why_not = "serves 2 spatial dims, the layer has " + std::to_string(s.rank());
    return false;
  }
  const WindowGeometry& g = s.window;
  for (size_t i = 0; i < 2; ++i) {
    if (g.dilations[i] != 1 || g.strides[i] < 1 || g.strides[i] > 2 || g.kernel[i] > max_kernel ||
        g.pads_begin[i] < 0) {
      why_not = "serves kernels up to " + std::to_string(max_kernel) + "x" + std::to_string(max_kernel) +
                " with strides 1 or 2, no dilation";
      return false;
    }
  }
  const int64_t align = (g.pads_begin[1] + 3) / 4 * 4;
  if (align - g.pads_begin[1] + 7 * g.strides[1] + g.kernel[1] > 24) {
    why_not = "the row span of 8 outputs exceeds 24 inputs";
    return false;
  }
  if (g.out[1] <= int64_t(kPixels)) {
    why_not = "rows of " + std::to_string(g.out[1]) + " outputs leave nothing to tile";
    return false;
  }
  return true;
}

// The tile shaders' geometry specialization constants 3..10 for a dispatch of `shader`: its texel
// build (picked with wide stores) stores eight wide (kVecStore 2 where OW % 8 == 0).
std::vector<SpecValue> tile_spec(const ConvShape& s, uint32_t rows, bool has_bias, const std::string& shader) {
  const WindowGeometry& g = s.window;
  const auto u = [](int64_t v) { return uint32_t(v); };
  return {{1, rows},
          {2, has_bias},
          {3, u(g.kernel[0])},
          {4, u(g.kernel[1])},
          {5, u(g.strides[0])},
          {6, u(g.strides[1])},
          {7, u(g.pads_begin[0])},
          {8, u(g.pads_begin[1])},
          {9, g.in[1] % 4 == 0 ? 1u : 0u},
          {10, is_texel_build(shader) && g.out[1] % 8 == 0 ? 2u
               : g.out[1] % 4 == 0                         ? 1u
                                                           : 0u}};
}

// conv.depthwise_tile<R>x8: 2-D depthwise on conv/depthwise_tile.comp, R output rows x 8
// outputs per invocation, each input row read once (as vec4s when aligned).
std::optional<LayerPlan> plan_depthwise_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (s.group != s.in_channels || s.out_channels != s.in_channels) {
    why_not = "serves group == input channels == output channels only";
    return std::nullopt;
  }
  if (!tile_geometry(s, 7, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef w = bind_input(ctx, plan, 1);  // [C][1][KH][KW] is the shader's [C][KH * KW]
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const WindowGeometry& g = s.window;
  const int64_t planes = s.batch * s.in_channels;
  const uint64_t invocations = uint64_t(planes) * uint64_t((g.out[0] + rows - 1) / rows) * uint64_t((g.out[1] + 7) / 8);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  const uint64_t largest = uint64_t(std::max(ctx.input(0).size(), ctx.input(1).size()));  // X, W
  const std::string shader = ctx.texel_shader("conv/depthwise_tile", largest, /*wide_stores=*/true);
  plan.dispatches.push_back(dispatch(ctx, shader, tile_spec(s, rows, has_bias, shader),
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)},
                                     {uint32_t(planes), uint32_t(s.in_channels), uint32_t(g.in[0]), uint32_t(g.in[1]),
                                      uint32_t(g.out[0]), uint32_t(g.out[1])},
                                     invocations));
  return plan;
}

// conv.direct_tile<R>x8: 2-D Conv with few input channels per group on conv/direct_tile.comp:
// 8 output channels x R rows x 8 outputs per invocation, each input row read once per input channel.
std::optional<LayerPlan> plan_direct_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!tile_geometry(s, 5, why_not)) return std::nullopt;
  const LayerTensor& w_in = ctx.input(1);
  if (!w_in.is_constant() || s.cg() * s.kernel_size() > 1024 || s.mg() < 4) {
    why_not =
        "needs constant weights, at most 1024 taps per output (input channels per group x kernel) and 4 or "
        "more output channels per group";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef w =
      add_weight(plan, float_weight(pack_channel_blocks(float_values(*w_in.constant), s, false, 8), *st));
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const WindowGeometry& g = s.window;
  const int64_t blocks = (s.mg() + 7) / 8;
  const uint64_t invocations =
      uint64_t(s.batch * s.group * blocks) * uint64_t((g.out[0] + rows - 1) / rows) * uint64_t((g.out[1] + 7) / 8);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  const auto u = [](int64_t v) { return uint32_t(v); };
  const uint64_t largest = std::max(uint64_t(ctx.input(0).size()), uint64_t(plan.weights.front().size()));
  const std::string shader = ctx.texel_shader("conv/direct_tile", largest, /*wide_stores=*/true);
  plan.dispatches.push_back(dispatch(
      ctx, shader, tile_spec(s, rows, has_bias, shader), {BindingRef::input(0), w, bias, BindingRef::output(0)},
      {u(s.batch), u(s.in_channels), u(s.out_channels), u(s.group), u(g.in[0]), u(g.in[1]), u(g.out[0]), u(g.out[1])},
      invocations));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.winograd_f23

// U = G g G^T for every (m, c), as the GEMM's A of each of the (out_tile + 2)^2
// elements xi of U: [xi][C][m_pad]. G of F(2x2, 3x3), or of F(4x4, 3x3) (Lavin
// and Gray: interpolation points 0, -1, 1, -2, 2 and infinity).
std::vector<float> winograd_weights(const std::vector<float>& w, int64_t m_count, int64_t c_count, int64_t m_pad,
                                    int out_tile) {
  static const double kG23[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double kG43[6][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
  const int n = out_tile + 2;
  const double(*g_rows)[3] = out_tile == 4 ? kG43 : kG23;
  std::vector<float> out(size_t(n * n * c_count * m_pad), 0.0f);
  for (int64_t m = 0; m < m_count; ++m)
    for (int64_t c = 0; c < c_count; ++c) {
      const float* g = w.data() + (m * c_count + c) * 9;
      double gg[6][3];  // G g
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = g_rows[i][0] * g[j] + g_rows[i][1] * g[3 + j] + g_rows[i][2] * g[6 + j];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double u = gg[i][0] * g_rows[j][0] + gg[i][1] * g_rows[j][1] + gg[i][2] * g_rows[j][2];
          out[size_t(((i * n + j) * c_count + c) * m_pad + m)] = float(u);
        }
    }
  return out;
}

// Input transform (conv/winograd_input.comp) -> 16 GEMMs over the input
// channels (conv/gemm.comp with the 16 elements as its groups) -> output
// transform (conv/winograd_output.comp).
// The 16 GEMMs run on conv/gemm.comp (`blocking`), or with `block` on
// gemm/block.comp (register blocks: transformed weights as [16][M][C] rows,
// which needs C % 4 == 0). With out_tile 4, F(4x4, 3x3): the same with 36
// elements per tile (conv/winograd43_input.comp, conv/winograd43_output.comp).
std::optional<LayerPlan> plan_winograd(const LayerContext& ctx, GemmBlocking blocking, std::optional<BlockShape> block,
                                       std::string& why_not, int out_tile = 2) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  const WindowGeometry& g = s.window;
  if (s.rank() != 2 || g.kernel != Shape{3, 3} || g.strides != std::vector<int64_t>{1, 1} ||
      g.dilations != std::vector<int64_t>{1, 1} || s.group != 1) {
    why_not = "serves 2-D 3x3 kernels with stride 1, dilation 1 and group 1 only";
    return std::nullopt;
  }
  const LayerTensor& w_in = ctx.input(1);
  if (!w_in.is_constant()) {
    why_not = "needs constant weights to transform";
    return std::nullopt;
  }
  if (block && s.in_channels % 4 != 0) {
    why_not = "needs input channels % 4 == 0 (vec4 runs of the transformed weights)";
    return std::nullopt;
  }
  const int64_t tiles_h = (g.out[0] + out_tile - 1) / out_tile;
  int64_t tiles_w = (g.out[1] + out_tile - 1) / out_tile;
  // F(4x4): a row of whole tiles (OW % 4 == 0) over an input row of vec4 runs is padded to a
  // multiple of four tiles, so that both transforms work on quads (the padding tiles read zeros
  // and are not stored): det's 40x40 level, 10 tiles a row, 2.2 -> 1.2 ms.
  if (out_tile == 4 && g.out[1] % 4 == 0 && g.in[1] % 4 == 0 && g.pads_begin[1] >= 0) tiles_w = round_up(tiles_w, 4);
  const int64_t positions = s.batch * tiles_h * tiles_w, p_pad = round_up(positions, 4);
  const size_t bytes = storage_element_bytes(*st);
  const int64_t xis = (out_tile + 2) * (out_tile + 2);  // elements of a transformed tile: 16 or 36
  const uint64_t v_elements = uint64_t(xis * s.in_channels * p_pad),
                 m_elements = uint64_t(xis * s.out_channels * positions);
  if (!fits_scratch(ctx, v_elements * bytes, "the Winograd input tiles", why_not) ||
      !fits_scratch(ctx, m_elements * bytes, "the Winograd products", why_not) ||
      !fits_invocations(v_elements / uint64_t(xis), why_not) || !fits_invocations(m_elements / uint64_t(xis), why_not))
    return std::nullopt;

  LayerPlan plan;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, v_elements * bytes));
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, m_elements * bytes));
  GemmShape shape;
  shape.group = xis;
  shape.mg = s.out_channels;
  shape.mg_pad = round_up(s.out_channels, blocking.tile_m);
  shape.positions = positions;
  shape.kdim = s.in_channels;
  shape.ldb = p_pad;
  shape.b_group = s.in_channels * p_pad;
  shape.aligned_b = true;
  std::vector<float> u_values = winograd_weights(float_values(*w_in.constant), s.out_channels, s.in_channels,
                                                 block ? s.out_channels : shape.mg_pad, out_tile);
  if (block) {  // [xi][C][M] -> [xi][M][C]
    std::vector<float> rows(u_values.size());
    const int64_t m_count = s.out_channels, c_count = s.in_channels;
    for (int64_t xi = 0; xi < xis; ++xi)
      for (int64_t c = 0; c < c_count; ++c)
        for (int64_t m = 0; m < m_count; ++m)
          rows[size_t((xi * m_count + m) * c_count + c)] = u_values[size_t((xi * c_count + c) * m_count + m)];
    u_values = std::move(rows);
  }
  const BindingRef u = add_weight(plan, float_weight(std::move(u_values), *st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "transformed weights",
                    why_not))
    return std::nullopt;
  const BindingRef no_bias = add_weight(plan, float_weight({}, *st));
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);

  // Four tiles of a row per invocation where rows of tiles and of inputs are vec4 runs; eight
  // (two such quads) stored eight wide where the device can.
  const bool vec4 = tiles_w % 4 == 0 && g.in[1] % 4 == 0 && g.pads_begin[1] >= 0;
  const uint64_t x_elements = uint64_t(ctx.input(0).size());
  const bool vec8 = vec4 && positions % 8 == 0 && ctx.texel_reads(x_elements, /*wide_stores=*/true);
  const uint32_t per_invocation = vec8 ? 8 : vec4 ? 4 : 1;
  const uint32_t in_form = vec8 ? 2 : vec4 ? 1 : 0;  // the transforms' specialization constant 1
  plan.dispatches.push_back(dispatch(
      ctx, ctx.texel_shader(out_tile == 4 ? "conv/winograd43_input" : "conv/winograd_input", x_elements),
      {{1, in_form}, {2, uint32_t(vec4 ? g.pads_begin[1] : 0)}}, {BindingRef::input(0), BindingRef::scratch(0)},
      {uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(g.in[0]), uint32_t(g.in[1]), uint32_t(tiles_h),
       uint32_t(tiles_w), word(int32_t(g.pads_begin[0])), word(int32_t(g.pads_begin[1]))},
      v_elements / uint64_t(xis) / per_invocation));
  std::optional<Dispatch> gemm;
  if (block) {
    // M[xi][m][p] = sum_c U[xi][m][c] * V[xi][c][p]: one batch of the product per xi.
    Product p;
    p.M = s.out_channels, p.N = positions, p.K = s.in_channels, p.batches = xis;
    p.a_bs = s.out_channels * s.in_channels, p.a_sm = s.in_channels, p.a_sk = 1;
    p.b_bs = s.in_channels * p_pad, p.b_sk = p_pad, p.b_sn = 1;
    gemm = block_dispatch(ctx, plan, p, *block, u, BindingRef::scratch(0), {no_bias, false}, {}, why_not,
                          BindingRef::scratch(1));
  } else {
    gemm = gemm_dispatch(ctx, shape, blocking, u, BindingRef::scratch(0), no_bias, false, BindingRef::scratch(1),
                         why_not);
  }
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  // Four whole tiles per invocation (F(4x4): or padding tiles past OW, which are not stored).
  const bool out_vec4 = tiles_w % 4 == 0 && g.out[1] % out_tile == 0;
  // F(4x4, 3x3): their output rows (16 values) stored eight wide where the device can.
  const bool out_vec8 =
      out_vec4 && out_tile == 4 && g.out[1] % 8 == 0 && ctx.texel_reads(m_elements, /*wide_stores=*/true);
  const uint32_t out_form = out_vec8 ? 2 : out_vec4 ? 1 : 0;
  plan.dispatches.push_back(
      dispatch(ctx, ctx.texel_shader(out_tile == 4 ? "conv/winograd43_output" : "conv/winograd_output", m_elements),
               {{1, has_bias}, {2, out_form}}, {BindingRef::scratch(1), bias, BindingRef::output(0)},
               {uint32_t(s.batch), uint32_t(s.out_channels), uint32_t(g.out[0]), uint32_t(g.out[1]), uint32_t(tiles_h),
                uint32_t(tiles_w)},
               m_elements / uint64_t(xis) / (out_vec4 ? 4 : 1)));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.integer_direct and conv.qlinear_direct (conv/integer.comp)

bool is_8bit(DType d) { return d == DType::UInt8 || d == DType::Int8; }

// The plan of conv/integer.comp. Inputs: x, w and the zero points at x_zp/w_zp;
// with requantize, multiplier (one or M values), bias at bias_index and y_zp at y_zp_index.
struct IntegerInputs {
  size_t x = 0, w = 1, x_zp = 2, w_zp = 3;
  std::optional<size_t> bias, y_zp;
  std::vector<float> multiplier;  // empty: no requantization
};

std::optional<LayerPlan> plan_integer(const LayerContext& ctx, const IntegerInputs& in, std::string& why_not) {
  const Node& node = ctx.node;
  const ConvShape s = conv_shape(ctx, in.x, in.w);
  check_output(ctx, s);
  if (!within_3d(s, why_not) || !fits_tensors(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(in.x);
  const LayerTensor& w = ctx.input(in.w);
  VKG_CHECK(is_8bit(x.dtype) && is_8bit(w.dtype), node.describe()
                                                      << ": x and w must be uint8 or int8, got " << dtype_name(x.dtype)
                                                      << " and " << dtype_name(w.dtype));
  if (ctx.has_input(in.x_zp)) {
    VKG_CHECK(ctx.input(in.x_zp).size() == 1, node.describe() << ": the zero point of x must be one value, got "
                                                              << shape_to_string(ctx.input(in.x_zp).shape));
  }
  int64_t w_zp_count = 1;
  if (ctx.has_input(in.w_zp)) {
    w_zp_count = ctx.input(in.w_zp).size();
    VKG_CHECK(w_zp_count == 1 || w_zp_count == s.out_channels, node.describe()
                                                                   << ": the zero point of w has " << w_zp_count
                                                                   << " values, expected 1 or " << s.out_channels);
  }

  LayerPlan plan;
  // Constant weights (and zero point) are packed with the zero point subtracted.
  const bool packed = w.is_constant() && (!ctx.has_input(in.w_zp) || ctx.input(in.w_zp).is_constant());
  BindingRef w_bind;
  if (packed) {
    std::vector<int32_t> values = int_values(*w.constant);
    if (ctx.has_input(in.w_zp)) {
      const std::vector<int32_t> zp = int_values(*ctx.input(in.w_zp).constant);
      const int64_t per_channel = s.cg() * s.kernel_size();
      for (size_t e = 0; e < values.size(); ++e) values[e] -= zp[zp.size() == 1 ? 0 : e / size_t(per_channel)];
    }
    w_bind = add_weight(plan, int_weight(pack_channel_blocks(values, s, false, 4)));
    if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights",
                      why_not))
      return std::nullopt;
  } else {
    w_bind = BindingRef::input(uint32_t(in.w));
  }
  const BindingRef x_zp = bind_optional(ctx, plan, in.x_zp, StorageType::I32).first;
  const BindingRef w_zp = bind_optional(ctx, plan, in.w_zp, StorageType::I32).first;
  const auto [bias, has_bias] = bind_optional(ctx, plan, in.bias, StorageType::I32);
  const bool requantize = !in.multiplier.empty();
  const BindingRef mult = add_weight(plan, float_weight(in.multiplier, StorageType::F32));
  const BindingRef y_zp = in.y_zp ? bind_input(ctx, plan, *in.y_zp) : add_weight(plan, int_weight({}));
  int32_t y_lo = std::numeric_limits<int32_t>::min(), y_hi = std::numeric_limits<int32_t>::max();
  if (requantize) {
    const bool is_unsigned = ctx.output(0).dtype == DType::UInt8;
    y_lo = is_unsigned ? 0 : -128;
    y_hi = is_unsigned ? 255 : 127;
  }

  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch),        uint32_t(s.in_channels),
                             uint32_t(s.out_channels), uint32_t(s.group),
                             uint32_t(w_zp_count),     uint32_t(std::max<size_t>(1, in.multiplier.size()))};
  push_window(push, win);
  push.push_back(word(y_lo));
  push.push_back(word(y_hi));
  const uint32_t pixels = std::min<uint32_t>(kPixels, win.out[2]);
  const uint64_t invocations =
      uint64_t(s.batch * s.group * ((s.mg() + 3) / 4)) * win.out[0] * win.out[1] * ((win.out[2] + pixels - 1) / pixels);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(
      dispatch(ctx, "conv/integer.f32", {{1, pixels}, {2, packed}, {3, has_bias}, {4, requantize}},
               {BindingRef::input(uint32_t(in.x)), w_bind, x_zp, w_zp, bias, mult, y_zp, BindingRef::output(0)}, push,
               invocations));
  return plan;
}

std::optional<LayerPlan> plan_conv_integer(const LayerContext& ctx, std::string& why_not) {
  return plan_integer(ctx, IntegerInputs{}, why_not);
}

// A float scale input that must be a build-time constant: one value, or
// `per_channel` values when per_channel > 0.
std::optional<std::vector<float>> constant_scales(const LayerContext& ctx, size_t index, int64_t per_channel,
                                                  std::string& why_not) {
  const LayerTensor& t = ctx.input(index);
  if (!t.is_constant()) {
    why_not = "scale input '" + t.name + "' must be a build-time constant (the multiplier is folded on the host)";
    return std::nullopt;
  }
  VKG_CHECK(t.constant->dtype() == DType::Float32, ctx.node.describe()
                                                       << ": scale '" << t.name << "' has type "
                                                       << dtype_name(t.constant->dtype()) << ", expected float32");
  VKG_CHECK(t.size() == 1 || (per_channel > 0 && t.size() == per_channel),
            ctx.node.describe() << ": scale '" << t.name << "' has shape " << shape_to_string(t.shape)
                                << ", expected one value" << (per_channel > 0 ? " or one per output channel" : ""));
  return float_values(*t.constant);
}

std::optional<LayerPlan> plan_qlinear_conv(const LayerContext& ctx, std::string& why_not) {
  IntegerInputs in;
  in.x = 0;
  in.x_zp = 2;
  in.w = 3;
  in.w_zp = 5;
  in.bias = 8;
  in.y_zp = 7;
  VKG_CHECK(!ctx.input(3).shape.empty(), ctx.node.describe() << ": weights must have rank >= 3");
  const int64_t m = ctx.input(3).shape[0];
  const std::optional<std::vector<float>> x_scale = constant_scales(ctx, 1, 0, why_not);
  if (!x_scale) return std::nullopt;
  const std::optional<std::vector<float>> w_scale = constant_scales(ctx, 4, m, why_not);
  if (!w_scale) return std::nullopt;
  const std::optional<std::vector<float>> y_scale = constant_scales(ctx, 6, 0, why_not);
  if (!y_scale) return std::nullopt;
  // Exactly the reference's float arithmetic: x_scale * w_scale / y_scale.
  for (float ws : *w_scale) in.multiplier.push_back((*x_scale)[0] * ws / (*y_scale)[0]);
  VKG_CHECK(ctx.input(7).size() == 1 && is_8bit(ctx.input(7).dtype),
            ctx.node.describe() << ": the output zero point must be one uint8 or int8 value");
  return plan_integer(ctx, in, why_not);
}

// DeformConv (2-D): shaders/conv/deform_conv.comp, one invocation per output element
// sampling its taps at the runtime offsets; X, W, offset, B and mask may all be data.
std::optional<LayerPlan> plan_deform_conv(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& w = ctx.input(1);
  std::vector<const LayerTensor*> floats = {&x, &w, &ctx.input(2), &ctx.output(0)};
  for (size_t i : {size_t(3), size_t(4)})
    if (ctx.has_input(i)) floats.push_back(&ctx.input(i));
  for (const LayerTensor* t : floats) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why_not = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader computes float data only";
      return std::nullopt;
    }
    if (t->size() > std::numeric_limits<int32_t>::max()) {
      why_not = "tensor '" + t->name + "' has more elements than 32-bit indices address";
      return std::nullopt;
    }
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  if (x.shape.size() != 4) {
    why_not = std::to_string(x.shape.size()) + "-D input: the shader serves 2-D DeformConv only";
    return std::nullopt;
  }
  VKG_CHECK(w.shape.size() == 4, node.describe() << ": W must be [M, C / group, kH, kW], got " << shape_to_string(w.shape));
  const WindowGeometry g =
      resolve_window(node, Shape(x.shape.begin() + 2, x.shape.end()), conv_kernel_shape(node, w.shape), false);
  const int64_t group = node.attr_int("group", 1), offset_groups = node.attr_int("offset_group", 1);
  VKG_CHECK(group >= 1 && offset_groups >= 1 && x.shape[1] % group == 0 && w.shape[0] % group == 0 &&
                w.shape[1] * group == x.shape[1] && x.shape[1] % offset_groups == 0,
            node.describe() << ": group " << group << " and offset_group " << offset_groups
                            << " must divide the channels of X " << shape_to_string(x.shape) << " and W "
                            << shape_to_string(w.shape));
  if (x.size() == 0 || ctx.output(0).size() == 0) {
    why_not = "an empty tensor: there is nothing to sample";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0), wb = bind_input(ctx, plan, 1), ob = bind_input(ctx, plan, 2);
  const auto optional_input = [&](size_t i) {
    if (ctx.has_input(i)) return bind_input(ctx, plan, i);
    return add_weight(plan, to_storage(Tensor::scalar<float>(0.0f).reshaped({1}), x.storage, "an unread binding"));
  };
  const BindingRef bb = optional_input(3), mb = optional_input(4);
  const int64_t total = ctx.output(0).size();
  Dispatch d;
  d.shader = ctx.shader("conv/deform_conv");
  d.spec = {{0, kLocalSize}, {1, ctx.has_input(3) ? 1u : 0u}, {2, ctx.has_input(4) ? 1u : 0u}};
  d.bindings = {xb, wb, ob, bb, mb, BindingRef::output(0)};
  const auto u = [](int64_t v) { return uint32_t(v); };
  d.push = {u(total),         u(x.shape[1]),       u(x.shape[2]),       u(x.shape[3]),
            u(w.shape[0]),    u(g.out[0]),         u(g.out[1]),         u(g.kernel[0]),
            u(g.kernel[1]),   u(x.shape[1] / group), u(w.shape[0] / group), u(x.shape[1] / offset_groups),
            u(offset_groups), u(g.strides[0]),     u(g.strides[1]),     u(g.pads_begin[0]),
            u(g.pads_begin[1]), u(g.dilations[0]), u(g.dilations[1])};
  d.groups = linear_groups(uint64_t(total), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace

void register_conv_tactics(TacticRegistry& r) {
  constexpr auto kF32 = Arith::F32, kF16 = Arith::F16, kF16Acc32 = Arith::F16Acc32;
  const std::vector<std::string> conv{"Conv"};
  // Specialised tactics first (each declines what it cannot serve); conv.direct serves every Conv.
  r.add_variants("deform_conv.direct", {"DeformConv"}, 0, {kF32, kF16Acc32}, plan_deform_conv);
  r.add_variants("conv.depthwise", conv, 10, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_depthwise(c, kPixels, w); });
  r.add_variants("conv.depthwise_wide", conv, 11, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_depthwise(c, 2 * kPixels, w); });
  for (const uint32_t rows : {2u, 4u}) {
    r.add_variants("conv.depthwise_tile" + std::to_string(rows) + "x8", conv, 8 + (rows == 2 ? 1 : 0),
                   {kF32, kF16, kF16Acc32},
                   [rows](const LayerContext& c, std::string& w) { return plan_depthwise_tile(c, rows, w); });
  }
  for (const uint32_t rows : {1u, 2u}) {
    r.add_variants("conv.direct_tile" + std::to_string(rows) + "x8", conv, 15 + int(rows), {kF32, kF16, kF16Acc32},
                   [rows](const LayerContext& c, std::string& w) { return plan_direct_tile(c, rows, w); });
  }
  r.add_variants("conv.winograd_f23", conv, 20, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, std::nullopt, w);
  });
  // After the F(4x4) tactics (optimization level 3 times the first six that serve): on det's four
  // FPN scales it never won against F(2x2) on 24-row blocks, F(4x4) or the plain F(2x2).
  r.add_variants("conv.winograd_f23_block8x8", conv, 25, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_winograd(c, {8, 8}, BlockShape{8, 2}, w);
                 });
  // 24 rows: M = 24 (det's FPN convolutions) in one block, fewer loads per multiply-add on lavapipe.
  r.add_variants("conv.winograd_f23_block24x16", conv, 22, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_winograd(c, {8, 8}, BlockShape{24, 4}, w);
                 });
  // F(4x4, 3x3): 36 GEMMs of a quarter of the positions, 1.78x fewer multiply-adds than F(2x2, 3x3) and fewer
  // transformed values to write; its transforms grow values more, so fp32 only.
  r.add_variants("conv.winograd_f43_block24x16", conv, 23, {kF32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, BlockShape{24, 4}, w, /*out_tile=*/4);
  });
  // Half the columns: twice the invocations of a small product, fewer idle SIMD lanes on lavapipe.
  r.add_variants("conv.winograd_f43_block24x8", conv, 24, {kF32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, BlockShape{24, 2}, w, /*out_tile=*/4);
  });
  r.add_variants("conv.1x1.8x8", conv, 30, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise(c, {8, 8}, w);
  });
  r.add_variants("conv.im2col_gemm.8x8", conv, 40, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_gemm(c, {8, 8}, w);
  });
  r.add_variants("conv.1x1.4x8", conv, 45, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise(c, {4, 8}, w);
  });
  r.add_variants("conv.im2col_gemm.4x8", conv, 46, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_gemm(c, {4, 8}, w);
  });
  r.add_variants("conv.1x1_block16x16", conv, 25, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {16, 4}, w);
  });
  r.add_variants("conv.1x1_block24x16", conv, 26, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {24, 4}, w);
  });
  r.add_variants("conv.1x1_block8x8", conv, 27, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {8, 2}, w);
  });
  // The GPU forms of the pointwise GEMM: first on GPUs, never among the candidates a lavapipe build
  // times at the default level (the conformance test runs them there).
  for (const auto& [base, tile, gpu_priority] :
       {std::tuple{"conv.1x1_smemv128x128", SmemTile{128, 128, 8, 8, 8, true}, 1},
        std::tuple{"conv.1x1_smemv64x64", SmemTile{64, 64, 16, 4, 4, true}, 2}}) {
    r.add_variants(base, conv, 60, {kF32, kF16, kF16Acc32},
                   [tile](const LayerContext& c, std::string& w) { return plan_pointwise_gpu(c, &tile, nullptr, w); },
                   {.gpu_priority = gpu_priority});
  }
  for (const auto& [base, tile] : {std::pair{"conv.1x1_coopmatv128x128", CoopTile{2, 4, 2, 4, 2, true}},
                                   std::pair{"conv.1x1_coopmatv64x64", CoopTile{2, 2, 2, 2, 2, true}}}) {
    r.add_variants(base, conv, 60, {kF16, kF16Acc32},
                   [tile](const LayerContext& c, std::string& w) { return plan_pointwise_gpu(c, nullptr, &tile, w); },
                   {.gpu_priority = 0, .device_feature = "cooperative-matrix"});
  }
  // The same reading the weights eight floats per load (fp32, 64-bit integers): fewer loads on lavapipe.
  for (const auto& [base, planner, priority] : {std::tuple{"conv.1x1_block16x16_wide_a", &plan_pointwise_block, 25},
                                                std::tuple{"conv.im2col_block16x16_wide_a", &plan_im2col_block, 35}}) {
    r.add_variants(base, conv, priority, {kF32},
                   [planner](const LayerContext& c, std::string& w) {
                     return planner(c, BlockShape{16, 4, true}, w);
                   },
                   {.device_feature = "int64"});
  }
  r.add_variants("conv.im2col_block16x16", conv, 35, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_block(c, {16, 4}, w);
  });
  r.add_variants("conv.im2col_block8x8", conv, 36, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_block(c, {8, 2}, w);
  });
  // First on GPUs among the forms of the few Convs it serves.
  r.add_variants("conv.im2col_splitk32x32", conv, 39, {kF32, kF16, kF16Acc32}, plan_im2col_splitk, {.gpu_priority = 1});
  r.add_variants("conv.transpose_block16x16", {"ConvTranspose"}, 40, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_transpose_block(c, {16, 4}, w); });
  r.add_variants("conv.transpose_block4x8", {"ConvTranspose"}, 41, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_transpose_block(c, {4, 2}, w); });
  // Implicit GEMM on shared-memory tiles: the GPU-class form (lavapipe prefers the register blocks above),
  // among the first a GPU build times for the Convs the 1x1 and split-K forms leave (3x3 and wider).
  for (const auto& [name, tile, priority, gpu_priority] : {std::tuple{"64x64", SmemTile{64, 64, 16, 4, 4}, 37, 3},
                                                           std::tuple{"32x32", SmemTile{32, 32, 16, 4, 4}, 38, 4}}) {
    r.add_variants(std::string("conv.implicit_gemm") + name, conv, priority, {kF32, kF16, kF16Acc32},
                   [tile](const LayerContext& c, std::string& w) { return plan_implicit_gemm(c, tile, false, w); },
                   {.gpu_priority = gpu_priority});
    r.add_variants(std::string("conv.transpose_implicit_gemm") + name, {"ConvTranspose"}, priority + 20,
                   {kF32, kF16, kF16Acc32},
                   [tile](const LayerContext& c, std::string& w) { return plan_implicit_gemm(c, tile, true, w); });
  }
  r.add_variants("conv.direct", conv, 50, {kF32, kF16, kF16Acc32}, plan_conv_direct);
  r.add_variants("conv.transpose_gather", {"ConvTranspose"}, 50, {kF32, kF16, kF16Acc32}, plan_transpose_gather);
  r.add_variants("conv.transpose_pair", {"ConvTranspose"}, 39, {kF32, kF16, kF16Acc32}, plan_transpose_pair);
  // Exact integer tactics: int32 arithmetic whatever the layer's precision, named by it.
  r.add(Tactic{"conv.integer_direct.i32", {"ConvInteger"}, kF32, 50, plan_conv_integer});
  r.add(Tactic{"conv.qlinear_direct.i32", {"QLinearConv"}, kF32, 50, plan_qlinear_conv});
}

}  // namespace vkg
