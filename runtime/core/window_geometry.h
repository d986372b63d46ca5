// The sliding-window geometry of ONNX's convolutions and pools: how kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode and, for ConvTranspose, output_padding
// and output_shape turn into an output size and the padding at each end of every
// spatial axis; also MaxUnpool's unpooled shape and LRN's channel window. One
// implementation serves the reference kernels, the Vulkan tactics (whose shaders are
// handed the numbers computed here) and the unit tests, so that a fix to a rule
// reaches every backend at once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

// The auto_pad attribute; NotSet (also an empty string) means the explicit pads.
enum class AutoPad { NotSet, Valid, SameUpper, SameLower };

// The per-axis arithmetic, on plain numbers (what the unit tests pin down).
namespace window {

// Extent of `kernel` taps spaced `dilation` apart: (kernel - 1) * dilation + 1.
int64_t dilated_extent(int64_t kernel, int64_t dilation);

// Output length and padding along one axis.
struct Axis {
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  int64_t out = 0;
};

// Explicit pads: floor((in + pads - extent) / stride) + 1, or rounded up with ceil_mode.
// With ceil_mode a last window that would start in the end padding is dropped: ONNX's
// rule (as ONNX Runtime and PyTorch apply it), so every window starts inside the input
// or its begin padding. nullopt when the window does not fit the padded input.
std::optional<int64_t> padded_output(int64_t in, int64_t extent, int64_t stride, int64_t pad_begin, int64_t pad_end,
                                     bool ceil_mode);

// auto_pad VALID: no padding, floor((in - extent) / stride) + 1; nullopt when the window
// is larger than the input.
std::optional<int64_t> valid_output(int64_t in, int64_t extent, int64_t stride);

// auto_pad SAME_UPPER (`upper`) or SAME_LOWER: output ceil(in / stride), and the padding
// that needs (never negative) split in halves, the odd one at the end for SAME_UPPER and
// at the beginning for SAME_LOWER.
Axis same_axis(int64_t in, int64_t extent, int64_t stride, bool upper);

// ConvTranspose's unpadded output length: stride * (in - 1) + output_padding + extent.
int64_t transpose_full_output(int64_t in, int64_t extent, int64_t stride, int64_t output_padding);

// ConvTranspose asked for output length `out` (output_shape, or SAME's in * stride): the
// pads that cut `full` (transpose_full_output) down to it, split in halves with the odd
// one at the end when `upper` (SAME_UPPER) and at the beginning otherwise. A negative
// total (a longer output) is split by floor division, so it extends the end.
Axis transpose_axis_for_output(int64_t full, int64_t out, bool upper);

// MaxUnpool's output length without output_shape: the length MaxPool's input had,
// (in - 1) * stride + kernel - pads.
int64_t unpooled_length(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end);

// LRN sums channels c - before .. c + after: floor((size - 1) / 2) before, ceil after.
struct ChannelWindow {
  int64_t before = 0;
  int64_t after = 0;
};
ChannelWindow lrn_channel_window(int64_t size);

}  // namespace window

// Geometry of a sliding window (a Conv kernel or a pooling window) over the spatial
// dims of an N x C x D1 x ... x Dr input, with every attribute resolved to r values.
// For ConvTranspose `in` is X's spatial shape and `out` Y's, and the window maps the
// other way (X position o with kernel offset k writes Y position tap(d, o, k)).
struct WindowGeometry {
  Shape in;      // input spatial dims
  Shape kernel;  // window size per dim (before dilation)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  Shape out;  // output spatial dims

  size_t rank() const { return in.size(); }
  // Extent of the dilated window along dim i.
  int64_t extent(size_t i) const { return window::dilated_extent(kernel[i], dilations[i]); }
  // The position along dim d that window o reads at kernel offset k (negative or past
  // the end: the padding).
  int64_t tap(size_t d, int64_t o, int64_t k) const { return o * strides[d] + k * dilations[d] - pads_begin[d]; }
};

// The auto_pad attribute of `node`. Throws Error naming the node for an unknown value.
AutoPad auto_pad_of(const Node& node);

// Reads strides, dilations, pads and auto_pad of a Conv-like or pooling `node` and
// computes the output size of `kernel` sliding over `in` (see window::padded_output for
// `ceil_mode`). Throws Error naming the node on attributes of the wrong length, bad
// values, or an empty output.
WindowGeometry resolve_window(const Node& node, const Shape& in, const Shape& kernel, bool ceil_mode);

// A pooling node's window (MaxPool, AveragePool, LpPool): its required kernel_shape
// and its ceil_mode, then as resolve_window.
WindowGeometry resolve_pool_window(const Node& node, const Shape& in);

// The spatial kernel of a Conv-like node: W's dims after the first two, checked against
// the optional kernel_shape attribute. Throws Error naming the node when they differ.
Shape conv_kernel_shape(const Node& node, const Shape& w);

// ConvTranspose: reads strides, dilations, output_padding, pads, output_shape (which may
// also list N and C) and auto_pad. output_shape, or SAME's in * stride, fixes the output
// size and the pads follow from it (ONNX's spec). Throws Error naming the node.
WindowGeometry resolve_transpose_window(const Node& node, const Shape& in, const Shape& kernel);

// The global pools: one window covering all of `in`.
WindowGeometry global_window(const Shape& in);

// MaxUnpool without output_shape: the full shape [N, C, spatial...] that MaxPool's input
// had, for X of shape `x` (rank >= 3). Throws Error naming the node for a missing
// kernel_shape, attributes of the wrong length, or an empty result.
Shape unpooled_shape(const Node& node, const Shape& x);

}  // namespace vkg
