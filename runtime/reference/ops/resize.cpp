// Reference kernels of Resize (opsets 10 to 19) and the deprecated Upsample: the weighted
// sum over each output element's taps (runtime/core/resize_sampling.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "runtime/core/resize_sampling.h"
#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

using resize::AxisTaps;
using resize::Tap;

// Advances `pick` to the next combination of per-axis choices; false after the last one.
bool next_combination(std::vector<size_t>& pick, const std::vector<const AxisTaps*>& axes) {
  for (size_t d = pick.size(); d-- > 0;) {
    if (++pick[d] < axes[d]->taps.size()) return true;
    pick[d] = 0;
  }
  return false;
}

Tensor run_resize(const KernelContext& ctx, const resize::Params& p) {
  const Tensor& x = ctx.input(0);
  const size_t rank = p.out_shape.size();
  Tensor out(x.dtype(), p.out_shape);
  if (out.empty()) return out;
  VKG_CHECK(!x.empty(), ctx.node.describe() << ": cannot resize the empty tensor " << x.describe() << " to "
                                            << shape_to_string(p.out_shape));

  std::vector<std::vector<AxisTaps>> taps(rank);  // [axis][output coordinate]
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < p.out_shape[d]; ++o) taps[d].push_back(resize::taps_for(p, d, o, x.dim(int64_t(d))));

  const auto in_strides = contiguous_strides(x.shape());
  const size_t elem = dtype_size(x.dtype());
  const std::vector<double> values = p.mode == resize::Mode::Nearest ? std::vector<double>{} : x.to_doubles();
  std::vector<const AxisTaps*> axes(rank);
  std::vector<size_t> pick(rank);
  int64_t k = 0;
  for (IndexIterator it(p.out_shape); !it.done(); it.next(), ++k) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      axes[d] = &taps[d][size_t(it.index()[d])];
      outside = outside || axes[d]->outside;
    }
    if (outside) {
      out.set_from_double(k, p.extrapolation_value);
      continue;
    }
    if (p.mode == resize::Mode::Nearest) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) offset += axes[d]->taps[0].index * in_strides[d];
      std::memcpy(out.raw() + size_t(k) * elem, x.raw() + size_t(offset) * elem, elem);
      continue;
    }
    double sum = 0;
    std::fill(pick.begin(), pick.end(), 0);
    do {
      double weight = 1;
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        const Tap& t = axes[d]->taps[pick[d]];
        weight *= t.weight;
        offset += t.index * in_strides[d];
      }
      sum += weight * values[size_t(offset)];
    } while (next_combination(pick, axes));
    out.set_from_double(k, sum);
  }
  return out;
}

// Input i as Resize's optional roi/scales: nullopt when absent or empty.
std::optional<std::vector<double>> optional_values(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i) || ctx.input(i).empty()) return std::nullopt;
  return ctx.input(i).to_doubles();
}

std::vector<Tensor> resize_kernel(const KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape();
  if (ctx.opset < 11) return {run_resize(ctx, resize::legacy_params(ctx.node, in, ctx.input(1).to_doubles()))};
  resize::Inputs inputs;
  inputs.roi = optional_values(ctx, 1);
  inputs.scales = optional_values(ctx, 2);
  if (ctx.has_input(3) && !ctx.input(3).empty()) inputs.sizes = int_input(ctx, 3, "sizes");
  return {run_resize(ctx, resize::params(ctx.node, ctx.opset, in, inputs))};
}

std::vector<Tensor> upsample(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<double> scales;
  if (ctx.has_input(1)) {
    scales = ctx.input(1).to_doubles();  // Upsample-9
  } else if (ctx.node.has_attr("scales")) {
    for (float s : ctx.node.attr_floats("scales")) scales.push_back(s);  // Upsample-7
  } else {
    // Upsample-1: NCHW with height_scale and width_scale.
    VKG_CHECK(x.rank() == 4, ctx.node.describe()
                                 << ": height_scale/width_scale need a 4-D input, got " << x.describe());
    scales = {1.0, 1.0, ctx.node.attr_float("height_scale", 1.0f), ctx.node.attr_float("width_scale", 1.0f)};
  }
  return {run_resize(ctx, resize::legacy_params(ctx.node, x.shape(), scales))};
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  registry.add("Resize", resize_kernel);
  registry.add("Upsample", upsample);
  register_pad_ops(registry);
}

}  // namespace vkg
