// Reference kernel of Pad: modes constant, reflect, edge (and wrap, opset 19's).
// Negative pads crop; the positive pads are then filled from the cropped input.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

PadMode pad_mode(const KernelContext& ctx) {
  const std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap") return PadMode::Wrap;
  VKG_THROW(ctx.node.describe() << ": unknown mode '" << mode << "'");
}

// Index in [0, n) that position i (possibly outside) takes in the given mode; n > 0.
int64_t fold_index(PadMode mode, int64_t i, int64_t n) {
  switch (mode) {
    case PadMode::Constant:
    case PadMode::Edge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::Reflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < n ? m : period - m;
    }
    case PadMode::Wrap:
      return ((i % n) + n) % n;
  }
  return 0;
}

// For every output position along one axis, the input index it reads, or -1 where
// the constant value goes.
std::vector<int64_t> pad_axis_map(const KernelContext& ctx, PadMode mode, int64_t dim, int64_t before, int64_t after) {
  const int64_t crop_lo = std::max<int64_t>(0, -before);
  const int64_t kept = dim - crop_lo - std::max<int64_t>(0, -after);
  VKG_CHECK(kept >= 0, ctx.node.describe() << ": pads " << before << ", " << after << " crop more than the " << dim
                                           << " elements of an axis");
  const int64_t pad_lo = std::max<int64_t>(0, before);
  const int64_t out_dim = kept + pad_lo + std::max<int64_t>(0, after);
  VKG_CHECK(mode == PadMode::Constant || kept > 0 || out_dim == 0,
            ctx.node.describe() << ": cannot pad an empty axis in mode " << ctx.node.attr_string("mode", ""));
  std::vector<int64_t> map(static_cast<size_t>(out_dim), 0);
  for (int64_t o = 0; o < out_dim; ++o) {
    const int64_t i = o - pad_lo;
    const bool inside = i >= 0 && i < kept;
    map[size_t(o)] = !inside && mode == PadMode::Constant ? -1 : crop_lo + fold_index(mode, i, kept);
  }
  return map;
}

std::vector<Tensor> pad(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const PadMode mode = pad_mode(ctx);
  std::vector<int64_t> pads, axes;
  Tensor fill(x.dtype(), {});  // the constant value, zero by default
  if (ctx.opset < 11) {
    // Pad-1 called the attribute "paddings"; Pad-2 renamed it "pads".
    pads = ctx.node.attr_ints(ctx.opset < 2 ? "paddings" : "pads");
    fill.set_from_double(0, ctx.node.attr_float("value", 0.0f));
  } else {
    pads = int_input(ctx, 1, "pads");
    if (ctx.has_input(2) && !ctx.input(2).empty()) {
      const Tensor& value = ctx.input(2);
      VKG_CHECK(value.size() == 1 && value.dtype() == x.dtype(),
                ctx.node.describe() << ": constant_value must be one " << dtype_name(x.dtype()) << " element, got "
                                    << value.describe());
      fill = value.reshaped({});
    }
    if (ctx.has_input(3)) axes = node_axes(ctx, int_input(ctx, 3, "axes"), x.rank());
  }
  if (axes.empty()) {
    axes.resize(size_t(x.rank()));
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  VKG_CHECK(pads.size() == 2 * axes.size(),
            ctx.node.describe() << ": " << pads.size() << " pads for " << axes.size() << " axes of " << x.describe());

  std::vector<int64_t> before(size_t(x.rank()), 0), after(size_t(x.rank()), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    before[size_t(axes[k])] = pads[k];
    after[size_t(axes[k])] = pads[k + axes.size()];
  }
  std::vector<std::vector<int64_t>> maps;
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    maps.push_back(pad_axis_map(ctx, mode, x.dim(d), before[size_t(d)], after[size_t(d)]));
    shape.push_back(int64_t(maps.back().size()));
  }

  Tensor out(x.dtype(), shape);
  const size_t elem = dtype_size(x.dtype());
  const auto in_strides = contiguous_strides(x.shape());
  size_t k = 0;
  for (IndexIterator it(shape); !it.done(); it.next(), ++k) {
    int64_t offset = 0;
    bool padded = false;
    for (size_t d = 0; d < shape.size() && !padded; ++d) {
      const int64_t i = maps[d][size_t(it.index()[d])];
      padded = i < 0;
      offset += i * in_strides[d];
    }
    const std::byte* src = padded ? fill.raw() : x.raw() + size_t(offset) * elem;
    std::memcpy(out.raw() + k * elem, src, elem);
  }
  return {out};
}

}  // namespace

void register_pad_ops(OpRegistry& registry) { registry.add("Pad", pad); }

}  // namespace vkg
