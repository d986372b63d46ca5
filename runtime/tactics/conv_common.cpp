// The helpers shared by the conv family's forms (declared in conv_common.h):
// the layer geometry, packed weights, the 3-D window, dispatches and limits.
#include "runtime/tactics/conv_common.h"

#include <algorithm>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"

namespace vkg::conv_tactics {

namespace {

void check_ranks(const Node& node, const Shape& x, const Shape& w) {
  VKG_CHECK(x.size() >= 3, node.describe()
                               << ": input X must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x));
  VKG_CHECK(w.size() == x.size(), node.describe() << ": weights " << shape_to_string(w)
                                                  << " must have the rank of the input " << shape_to_string(x));
}

}  // namespace

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

std::pair<BindingRef, bool> bind_optional(const LayerContext& ctx, LayerPlan& plan, std::optional<size_t> index,
                                          StorageType s) {
  if (index && ctx.has_input(*index)) return {bind_input(ctx, plan, *index), true};
  if (s == StorageType::I32) return {add_weight(plan, int_weight({})), false};
  return {add_weight(plan, float_weight({}, s)), false};
}

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

bool taps_fit(const LayerContext& ctx, const ConvShape& s, std::string& why_not) {
  return loops_fit_device(ctx, uint64_t(s.cg()) * uint64_t(s.kernel_size()), 2, why_not);
}

bool single_transpose(const LayerContext& ctx, std::string& why_not) {
  if (!transpose_pair(ctx.node)) return true;
  why_not = "the layer holds two ConvTransposes (conv.transpose_pair serves it)";
  return false;
}

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

}  // namespace vkg::conv_tactics
