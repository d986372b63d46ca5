// How QuantizeLinear and DequantizeLinear (opsets 10 to 23) pair each element of x with
// its scale and zero point: one pair for the whole tensor, one per index along `axis`
// (opset 13), or one per block of `block_size` consecutive indices along `axis` (opset 21;
// the scale then has x's shape with that axis divided, rounded up). One implementation
// serves the reference kernels and the Vulkan tactic, which pushes the layout's words.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg::quant {

// x seen as [outer, axis_dim, inner]; element (o, a, i) uses the parameter at
// o * stride_outer + (a / block) * stride_axis + i * stride_inner.
struct Layout {
  int64_t outer = 1, axis_dim = 1, inner = 1;
  int64_t block = 1;
  int64_t stride_outer = 0, stride_axis = 0, stride_inner = 0;
  int64_t params = 1;  // number of scale (and zero point) values

  int64_t index(int64_t e) const {
    const int64_t i = e % inner, a = (e / inner) % axis_dim, o = e / (inner * axis_dim);
    return o * stride_outer + (a / block) * stride_axis + i * stride_inner;
  }
};

// The layout of x's shape for a scale of shape `scale` under the node's axis and
// block_size. Throws Error naming the node when the scale fits none of the three forms.
Layout layout(const Node& node, int64_t opset, const Shape& x, const Shape& scale);

// Throws Error naming the node unless the zero point has the scale's shape (or one value
// for a one-value scale) and the integer type of the quantized side.
void check_zero_point(const Node& node, const Shape& scale, const Shape& zero_point, DType zero_type,
                      DType quantized);

// QuantizeLinear's output type: the zero point's, else output_dtype (opset 21), else
// uint8. Throws Error naming the node for a type other than (u)int8 and, from opset 21,
// (u)int16 (float8 and 4-bit types are not supported).
DType quantized_type(const Node& node, int64_t opset, std::optional<DType> zero_point);

// Whether `d` is a quantized integer type of the node's opset; `x_side` admits int32,
// which DequantizeLinear takes (without a zero point other than 0).
bool is_quantized_type(DType d, int64_t opset, bool x_side);

// The range of a quantized integer type.
std::pair<int64_t, int64_t> range(DType d);

}  // namespace vkg::quant
