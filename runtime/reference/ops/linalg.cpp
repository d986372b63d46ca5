// The linalg op family: registration, and the window geometry shared by Conv,
// ConvTranspose and the pools. The kernels live in conv.cpp, matmul.cpp, pool.cpp and
// linalg_quantized.cpp; the GEMM they share in gemm.cpp.
#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg {

namespace linalg {

namespace {

std::string join(const std::vector<int64_t>& v) { return shape_to_string(v); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<int64_t> per_dim_attr(const Node& node, const char* name, size_t count, int64_t def, int64_t min_value) {
  const std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(count, def));
  VKG_CHECK(v.size() == count, node.describe() << ": attribute '" << name << "' has " << v.size()
                                               << " values, expected " << count << " for this input rank");
  for (int64_t x : v)
    VKG_CHECK(x >= min_value,
              node.describe() << ": attribute '" << name << "' = " << join(v) << " has a value below " << min_value);
  return v;
}

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

WindowGeometry resolve_window(const Node& node, const Shape& in, const Shape& kernel, bool ceil_mode) {
  const size_t r = in.size();
  VKG_CHECK(kernel.size() == r, node.describe() << ": kernel shape " << join(kernel) << " has " << kernel.size()
                                                << " dims but the input has " << r << " spatial dims");
  for (int64_t k : kernel)
    VKG_CHECK(k >= 1, node.describe() << ": kernel shape " << join(kernel) << " has a non-positive dim");
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  g.strides = per_dim_attr(node, "strides", r, 1, 1);
  g.dilations = per_dim_attr(node, "dilations", r, 1, 1);
  g.pads_begin.assign(r, 0);
  g.pads_end.assign(r, 0);
  g.out.assign(r, 0);

  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad.empty()) auto_pad = "NOTSET";
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = per_dim_attr(node, "pads", 2 * r, 0, 0);
    for (size_t i = 0; i < r; ++i) {
      g.pads_begin[i] = pads[i];
      g.pads_end[i] = pads[i + r];
      const int64_t span = in[i] + pads[i] + pads[i + r] - g.extent(i);
      VKG_CHECK(span >= 0, node.describe()
                               << ": the window " << join(kernel) << " (dilations " << join(g.dilations)
                               << ") does not fit the padded input " << join(in) << " (pads " << join(pads) << ")");
      g.out[i] = (ceil_mode ? ceil_div(span, g.strides[i]) : span / g.strides[i]) + 1;
      // A last window that would start in the end padding is dropped (as ONNX Runtime and PyTorch do).
      if (ceil_mode && (g.out[i] - 1) * g.strides[i] >= in[i] + pads[i]) --g.out[i];
    }
  } else if (auto_pad == "VALID") {
    for (size_t i = 0; i < r; ++i) {
      VKG_CHECK(in[i] >= g.extent(i), node.describe()
                                          << ": the window " << join(kernel) << " (dilations " << join(g.dilations)
                                          << ") is larger than the input " << join(in) << " with auto_pad VALID");
      g.out[i] = (in[i] - g.extent(i)) / g.strides[i] + 1;
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) {
      g.out[i] = ceil_div(in[i], g.strides[i]);
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + g.extent(i) - in[i]);
      const int64_t smaller = total / 2;
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? smaller : total - smaller;
      g.pads_end[i] = total - g.pads_begin[i];
    }
  } else {
    VKG_THROW(node.describe() << ": unknown auto_pad '" << auto_pad
                              << "' (expects NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  }
  for (int64_t o : g.out) VKG_CHECK(o >= 1, node.describe() << ": output spatial shape " << join(g.out) << " is empty");
  return g;
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
