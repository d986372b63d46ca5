// Einsum (opset 12): the equation resolved once (runtime/core/einsum_equation.h), then
// every output element is the sum, over the labels absent from the output, of the product
// of the operands. Floating operands compute in double, integer ones in 64-bit integers.
#include "runtime/core/einsum_equation.h"
#include "runtime/reference/ops/linalg_kernels.h"
#include "runtime/reference/ops/normalization_common.h"

namespace vkg::linalg {
namespace {

// The output as values of V (double or int64_t) from operand values of V.
template <class V> std::vector<V> contract(const EinsumEquation& e, const std::vector<std::vector<V>>& operands) {
  const Shape out_shape = e.output_shape();
  const int64_t out_count = num_elements(out_shape), summed_count = e.summed_count();
  const size_t n = operands.size();
  std::vector<V> out(size_t(out_count), V(0));
  std::vector<int64_t> base(n), offset(n);
  std::vector<int64_t> index(e.summed.size());
  for (int64_t o = 0; o < out_count; ++o) {
    // The operands' offsets of output element o.
    std::fill(base.begin(), base.end(), 0);
    int64_t rest = o;
    for (size_t a = e.output.size(); a-- > 0;) {
      const int32_t l = e.output[a];
      const int64_t i = rest % e.sizes[size_t(l)];
      rest /= e.sizes[size_t(l)];
      for (size_t k = 0; k < n; ++k) base[k] += i * e.strides[k][size_t(l)];
    }
    // An odometer over the summed labels.
    std::fill(index.begin(), index.end(), 0);
    offset = base;
    V acc = V(0);
    for (int64_t s = 0; s < summed_count; ++s) {
      V prod = V(1);
      for (size_t k = 0; k < n; ++k) prod *= operands[k][size_t(offset[k])];
      acc += prod;
      for (size_t j = e.summed.size(); j-- > 0;) {
        const size_t l = size_t(e.summed[j]);
        for (size_t k = 0; k < n; ++k) offset[k] += e.strides[k][l];
        if (++index[j] < e.sizes[l]) break;
        for (size_t k = 0; k < n; ++k) offset[k] -= index[j] * e.strides[k][l];
        index[j] = 0;
      }
    }
    out[size_t(o)] = acc;
  }
  return out;
}

}  // namespace

std::vector<Tensor> einsum(const KernelContext& ctx) {
  const Node& node = ctx.node;
  VKG_CHECK(ctx.num_inputs() >= 1, node.describe() << ": Einsum needs at least one input");
  std::vector<Shape> shapes;
  const DType dtype = ctx.input(0).dtype();
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& t = ctx.input(k);
    VKG_CHECK(t.dtype() == dtype, node.describe() << ": input " << k << " is " << dtype_name(t.dtype())
                                                  << ", input 0 is " << dtype_name(dtype));
    shapes.push_back(t.shape());
  }
  const EinsumEquation e = parse_einsum(node.attr_string("equation", ""), shapes, node.describe());
  if (is_floating(dtype)) {
    std::vector<std::vector<double>> operands;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) operands.push_back(load_doubles(node, ctx.input(k)));
    return {store_doubles(node, dtype, e.output_shape(), contract(e, operands))};
  }
  VKG_CHECK(is_integer(dtype), node.describe() << ": Einsum of " << dtype_name(dtype) << " is not supported");
  std::vector<std::vector<int64_t>> operands;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) operands.push_back(ctx.input(k).to_int64s());
  return {Tensor::from_vector<int64_t>(e.output_shape(), contract(e, operands)).cast(dtype)};
}

}  // namespace vkg::linalg
