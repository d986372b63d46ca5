// The window rules of window_geometry.h: the per-axis arithmetic, and the readers that
// turn a node's attributes into a WindowGeometry with errors naming the node.
#include "runtime/core/window_geometry.h"

#include <algorithm>
#include <string>

namespace vkg {

namespace window {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t dilated_extent(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

std::optional<int64_t> padded_output(int64_t in, int64_t extent, int64_t stride, int64_t pad_begin, int64_t pad_end,
                                     bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - extent;
  if (span < 0) return std::nullopt;
  int64_t out = (ceil_mode ? ceil_div(span, stride) : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

std::optional<int64_t> valid_output(int64_t in, int64_t extent, int64_t stride) {
  if (in < extent) return std::nullopt;
  return (in - extent) / stride + 1;
}

Axis same_axis(int64_t in, int64_t extent, int64_t stride, bool upper) {
  Axis a;
  a.out = ceil_div(in, stride);
  const int64_t total = std::max<int64_t>(0, (a.out - 1) * stride + extent - in);
  const int64_t smaller = total / 2;
  a.pad_begin = upper ? smaller : total - smaller;
  a.pad_end = total - a.pad_begin;
  return a;
}

int64_t transpose_full_output(int64_t in, int64_t extent, int64_t stride, int64_t output_padding) {
  return stride * (in - 1) + output_padding + extent;
}

Axis transpose_axis_for_output(int64_t full, int64_t out, bool upper) {
  Axis a;
  const int64_t total = full - out;
  const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
  a.pad_begin = upper ? half : total - half;
  a.pad_end = total - a.pad_begin;
  a.out = out;
  return a;
}

int64_t unpooled_length(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end) {
  return (in - 1) * stride + kernel - pad_begin - pad_end;
}

ChannelWindow lrn_channel_window(int64_t size) {
  ChannelWindow w;
  w.before = (size - 1) / 2;
  w.after = size - 1 - w.before;
  return w;
}

}  // namespace window

namespace {

std::string join(const std::vector<int64_t>& v) { return shape_to_string(v); }

// The attribute `name` of `node` with `count` values, or `def` repeated when absent.
// Throws Error naming the node when the count is wrong or a value is below min_value.
std::vector<int64_t> per_dim_attr(const Node& node, const char* name, size_t count, int64_t def, int64_t min_value) {
  const std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(count, def));
  VKG_CHECK(v.size() == count, node.describe() << ": attribute '" << name << "' has " << v.size()
                                               << " values, expected " << count << " for this input rank");
  for (int64_t x : v)
    VKG_CHECK(x >= min_value,
              node.describe() << ": attribute '" << name << "' = " << join(v) << " has a value below " << min_value);
  return v;
}

// `g` with in, kernel, strides and dilations read, pads zero and out unset.
WindowGeometry start_geometry(const Node& node, const Shape& in, const Shape& kernel) {
  const size_t r = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  g.strides = per_dim_attr(node, "strides", r, 1, 1);
  g.dilations = per_dim_attr(node, "dilations", r, 1, 1);
  g.pads_begin.assign(r, 0);
  g.pads_end.assign(r, 0);
  g.out.assign(r, 0);
  return g;
}

void check_kernel(const Node& node, const Shape& in, const Shape& kernel) {
  VKG_CHECK(kernel.size() == in.size(), node.describe() << ": kernel shape " << join(kernel) << " has " << kernel.size()
                                                        << " dims but the input has " << in.size() << " spatial dims");
  for (int64_t k : kernel)
    VKG_CHECK(k >= 1, node.describe() << ": kernel shape " << join(kernel) << " has a non-positive dim");
}

// resolve_window's explicit pads (auto_pad NOTSET).
void apply_explicit_pads(const Node& node, bool ceil_mode, WindowGeometry& g) {
  const size_t r = g.rank();
  const std::vector<int64_t> pads = per_dim_attr(node, "pads", 2 * r, 0, 0);
  for (size_t i = 0; i < r; ++i) {
    g.pads_begin[i] = pads[i];
    g.pads_end[i] = pads[i + r];
    const std::optional<int64_t> out =
        window::padded_output(g.in[i], g.extent(i), g.strides[i], pads[i], pads[i + r], ceil_mode);
    VKG_CHECK(out.has_value(), node.describe() << ": the window " << join(g.kernel) << " (dilations "
                                               << join(g.dilations) << ") does not fit the padded input " << join(g.in)
                                               << " (pads " << join(pads) << ")");
    g.out[i] = *out;
  }
}

}  // namespace

AutoPad auto_pad_of(const Node& node) {
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad.empty() || auto_pad == "NOTSET") return AutoPad::NotSet;
  if (auto_pad == "VALID") return AutoPad::Valid;
  if (auto_pad == "SAME_UPPER") return AutoPad::SameUpper;
  if (auto_pad == "SAME_LOWER") return AutoPad::SameLower;
  VKG_THROW(node.describe() << ": unknown auto_pad '" << auto_pad
                            << "' (expects NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
}

WindowGeometry resolve_window(const Node& node, const Shape& in, const Shape& kernel, bool ceil_mode) {
  check_kernel(node, in, kernel);
  WindowGeometry g = start_geometry(node, in, kernel);
  const AutoPad auto_pad = auto_pad_of(node);
  switch (auto_pad) {
    case AutoPad::NotSet:
      apply_explicit_pads(node, ceil_mode, g);
      break;
    case AutoPad::Valid:
      for (size_t i = 0; i < g.rank(); ++i) {
        const std::optional<int64_t> out = window::valid_output(in[i], g.extent(i), g.strides[i]);
        VKG_CHECK(out.has_value(), node.describe()
                                       << ": the window " << join(kernel) << " (dilations " << join(g.dilations)
                                       << ") is larger than the input " << join(in) << " with auto_pad VALID");
        g.out[i] = *out;
      }
      break;
    case AutoPad::SameUpper:
    case AutoPad::SameLower:
      for (size_t i = 0; i < g.rank(); ++i) {
        const window::Axis a = window::same_axis(in[i], g.extent(i), g.strides[i], auto_pad == AutoPad::SameUpper);
        g.pads_begin[i] = a.pad_begin;
        g.pads_end[i] = a.pad_end;
        g.out[i] = a.out;
      }
      break;
  }
  for (int64_t o : g.out) VKG_CHECK(o >= 1, node.describe() << ": output spatial shape " << join(g.out) << " is empty");
  return g;
}

WindowGeometry resolve_pool_window(const Node& node, const Shape& in) {
  VKG_CHECK(node.has_attr("kernel_shape"), node.describe() << ": required attribute 'kernel_shape' is missing");
  return resolve_window(node, in, node.attr_ints("kernel_shape"), node.attr_int("ceil_mode", 0) != 0);
}

Shape conv_kernel_shape(const Node& node, const Shape& w) {
  const Shape kernel(w.begin() + 2, w.end());
  if (node.has_attr("kernel_shape")) {
    const std::vector<int64_t> attr = node.attr_ints("kernel_shape");
    VKG_CHECK(attr == kernel, node.describe() << ": attribute kernel_shape " << join(attr)
                                              << " does not match the weights " << join(w));
  }
  return kernel;
}

WindowGeometry resolve_transpose_window(const Node& node, const Shape& in, const Shape& kernel) {
  const size_t r = in.size();
  WindowGeometry g = start_geometry(node, in, kernel);
  const std::vector<int64_t> out_pad = per_dim_attr(node, "output_padding", r, 0, 0);
  const std::vector<int64_t> pads = per_dim_attr(node, "pads", 2 * r, 0, 0);
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  VKG_CHECK(out_shape.empty() || out_shape.size() == r,
            node.describe() << ": attribute 'output_shape' has " << out_shape.size() << " values, expected " << r);
  const AutoPad auto_pad = auto_pad_of(node);
  if (out_shape.empty() && (auto_pad == AutoPad::SameUpper || auto_pad == AutoPad::SameLower))
    for (size_t i = 0; i < r; ++i) out_shape.push_back(in[i] * g.strides[i]);

  for (size_t i = 0; i < r; ++i) {
    const int64_t full = window::transpose_full_output(in[i], g.extent(i), g.strides[i], out_pad[i]);
    if (!out_shape.empty()) {
      const window::Axis a = window::transpose_axis_for_output(full, out_shape[i], auto_pad == AutoPad::SameUpper);
      g.pads_begin[i] = a.pad_begin;
      g.pads_end[i] = a.pad_end;
      g.out[i] = a.out;
    } else if (auto_pad == AutoPad::NotSet) {
      g.pads_begin[i] = pads[i];
      g.pads_end[i] = pads[i + r];
      g.out[i] = full - pads[i] - pads[i + r];
    } else {  // VALID: no padding
      g.out[i] = full;
    }
    VKG_CHECK(g.out[i] >= 1, node.describe() << ": output spatial shape " << join(g.out) << " is empty");
  }
  return g;
}

WindowGeometry global_window(const Shape& in) {
  const size_t r = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = in;
  g.strides.assign(r, 1);
  g.dilations.assign(r, 1);
  g.pads_begin.assign(r, 0);
  g.pads_end.assign(r, 0);
  g.out.assign(r, 1);
  return g;
}

Shape unpooled_shape(const Node& node, const Shape& x) {
  const size_t r = x.size() - 2;
  VKG_CHECK(node.has_attr("kernel_shape"), node.describe() << ": required attribute 'kernel_shape' is missing");
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  VKG_CHECK(kernel.size() == r && strides.size() == r && pads.size() == 2 * r,
            node.describe() << ": kernel_shape, strides and pads must have " << r << ", " << r << " and " << 2 * r
                            << " values for this input");
  Shape shape{x[0], x[1]};
  for (size_t i = 0; i < r; ++i)
    shape.push_back(window::unpooled_length(x[2 + i], kernel[i], strides[i], pads[i], pads[i + r]));
  for (int64_t d : shape)
    VKG_CHECK(d >= 1, node.describe() << ": the unpooled shape " << shape_to_string(shape) << " is empty");
  return shape;
}

}  // namespace vkg
