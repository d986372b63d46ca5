#include "runtime/core/quantization.h"

#include <limits>

#include "runtime/core/error.h"

namespace vkg::quant {

Layout layout(const Node& node, int64_t opset, const Shape& x, const Shape& scale) {
  Layout l;
  const int64_t count = num_elements(scale);
  if (count == 1 && scale.size() <= 1) return l;  // one pair for the whole tensor
  VKG_CHECK(opset >= 13, node.describe() << ": the scale must be one value before opset 13, got shape "
                                         << shape_to_string(scale));
  const auto rank = int64_t(x.size());
  int64_t axis = node.attr_int("axis", 1);
  VKG_CHECK(axis >= -rank && axis < rank,
            node.describe() << ": axis " << axis << " is out of range for an input of shape " << shape_to_string(x));
  if (axis < 0) axis += rank;
  const int64_t block = opset >= 21 ? node.attr_int("block_size", 0) : 0;
  VKG_CHECK(block >= 0, node.describe() << ": block_size must not be negative, got " << block);
  for (int64_t d = 0; d < axis; ++d) l.outer *= x[size_t(d)];
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= x[size_t(d)];
  l.axis_dim = x[size_t(axis)];
  l.params = count;
  if (block == 0) {
    VKG_CHECK(scale.size() == 1 && scale[0] == l.axis_dim,
              node.describe() << ": a scale of shape " << shape_to_string(scale) << " fits neither one value nor one per index of axis "
                              << axis << " of an input of shape " << shape_to_string(x));
    l.stride_axis = 1;
    return l;
  }
  Shape expected = x;
  expected[size_t(axis)] = (l.axis_dim + block - 1) / block;
  VKG_CHECK(scale == expected, node.describe() << ": with block_size " << block << " along axis " << axis
                                               << " the scale must have shape " << shape_to_string(expected) << ", got "
                                               << shape_to_string(scale));
  l.block = block;
  l.stride_inner = 1;
  l.stride_axis = l.inner;
  l.stride_outer = expected[size_t(axis)] * l.inner;
  return l;
}

void check_zero_point(const Node& node, const Shape& scale, const Shape& zero_point, DType zero_type,
                      DType quantized) {
  VKG_CHECK(zero_type == quantized, node.describe() << ": the zero point has type " << dtype_name(zero_type)
                                                    << ", expected " << dtype_name(quantized));
  const bool single = num_elements(scale) == 1 && num_elements(zero_point) == 1 && zero_point.size() <= 1;
  VKG_CHECK(single || zero_point == scale, node.describe() << ": the zero point has shape " << shape_to_string(zero_point)
                                                           << " but the scale has shape " << shape_to_string(scale));
}

bool is_quantized_type(DType d, int64_t opset, bool x_side) {
  switch (d) {
    case DType::Int8:
    case DType::UInt8:
      return true;
    case DType::Int16:
    case DType::UInt16:
      return opset >= 21;
    case DType::Int32:
      return x_side;
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
      return false;
  }
  return false;
}

DType quantized_type(const Node& node, int64_t opset, std::optional<DType> zero_point) {
  const int64_t requested = opset >= 21 ? node.attr_int("output_dtype", 0) : 0;
  std::optional<DType> from_attr;
  if (requested != 0) {
    from_attr = dtype_from_onnx(int32_t(requested));
    VKG_CHECK(from_attr && is_quantized_type(*from_attr, opset, false),
              node.describe() << ": output_dtype " << requested << " is not a supported quantized type "
                              << "(uint8, int8, uint16, int16)");
  }
  if (zero_point) {
    VKG_CHECK(!from_attr || *from_attr == *zero_point,
              node.describe() << ": output_dtype " << dtype_name(*from_attr) << " differs from the zero point's type "
                              << dtype_name(*zero_point));
  }
  const DType t = zero_point ? *zero_point : from_attr ? *from_attr : DType::UInt8;
  VKG_CHECK(is_quantized_type(t, opset, false),
            node.describe() << ": quantizing to " << dtype_name(t) << " is not supported at opset " << opset
                            << " (uint8, int8; uint16, int16 from opset 21)");
  return t;
}

std::pair<int64_t, int64_t> range(DType d) {
  switch (d) {
    case DType::Int8:
      return {-128, 127};
    case DType::UInt8:
      return {0, 255};
    case DType::Int16:
      return {-32768, 32767};
    case DType::UInt16:
      return {0, 65535};
    case DType::Int32:
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
      break;
  }
  return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
}

}  // namespace vkg::quant
