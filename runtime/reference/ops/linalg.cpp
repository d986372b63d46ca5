// The linalg op family: registration and the helpers its kernels share. The kernels
// live in conv.cpp, matmul.cpp, pool.cpp and linalg_quantized.cpp; the GEMM they share
// in gemm.cpp; the window geometry in runtime/core/window_geometry.h.
#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg {

namespace linalg {

DType float_compute_type(const Node& node, DType dt) {
  switch (dt) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
      return DType::Float32;
    case DType::Float64:
      return DType::Float64;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
      break;
  }
  VKG_THROW(node.describe() << ": input type " << dtype_name(dt)
                            << " is not supported (expects float32, float16, bfloat16 or float64)");
}

const Tensor& as_type(const Tensor& t, DType to, Tensor& storage) {
  if (t.dtype() == to) return t;
  storage = t.cast(to);
  return storage;
}

std::vector<Tensor> one_output(Tensor t) {
  std::vector<Tensor> out;
  out.push_back(std::move(t));
  return out;
}

}  // namespace linalg

void register_linalg_ops(OpRegistry& registry) {
  registry.add("Conv", linalg::conv);
  registry.add("ConvTranspose", linalg::conv_transpose);
  registry.add("DeformConv", linalg::deform_conv);
  registry.add("Gemm", linalg::gemm_op);
  registry.add("MatMul", linalg::matmul);
  registry.add("Det", linalg::det);
  registry.add("Einsum", linalg::einsum);
  registry.add("MaxPool", linalg::max_pool);
  registry.add("AveragePool", linalg::average_pool);
  registry.add("LpPool", linalg::lp_pool);
  registry.add("GlobalAveragePool", linalg::global_average_pool);
  registry.add("GlobalMaxPool", linalg::global_max_pool);
  registry.add("GlobalLpPool", linalg::global_lp_pool);
  registry.add("MaxUnpool", linalg::max_unpool);
  registry.add("ConvInteger", linalg::conv_integer);
  registry.add("MatMulInteger", linalg::matmul_integer);
  registry.add("QLinearConv", linalg::qlinear_conv);
  registry.add("QLinearMatMul", linalg::qlinear_matmul);
}

}  // namespace vkg
