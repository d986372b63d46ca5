// Ops that convert or pass their input through: Cast, CastLike, Identity and
// Dropout (inference only).
#include <string>

#include "runtime/reference/ops/elementwise_util.h"

namespace vkg::elementwise {

namespace {

// Cast's `to` before opset 6: a type name string ("FLOAT", "INT64", ...).
DType dtype_from_legacy_name(const KernelContext& ctx, const std::string& name) {
  static const struct {
    const char* name;
    DType dtype;
  } table[] = {
      {"FLOAT", DType::Float32}, {"FLOAT16", DType::Float16}, {"DOUBLE", DType::Float64}, {"INT8", DType::Int8},
      {"INT16", DType::Int16},   {"INT32", DType::Int32},     {"INT64", DType::Int64},    {"UINT8", DType::UInt8},
      {"UINT16", DType::UInt16}, {"UINT32", DType::UInt32},   {"UINT64", DType::UInt64},  {"BOOL", DType::Bool},
  };
  for (const auto& entry : table)
    if (name == entry.name) return entry.dtype;
  VKG_THROW(ctx.node.describe() << ": cannot cast to type \"" << name << "\"");
}

std::vector<Tensor> cast_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const auto attr = ctx.node.attrs.find("to");
  VKG_CHECK(attr != ctx.node.attrs.end(), ctx.node.describe() << ": required attribute 'to' is missing");
  if (attr->second.kind == Attribute::Kind::String) {
    return one_output(ctx.input(0).cast(dtype_from_legacy_name(ctx, attr->second.s)));
  }
  const int64_t to = ctx.node.attr_int("to");
  const std::optional<DType> dtype = dtype_from_onnx(int32_t(to));
  VKG_CHECK(dtype, ctx.node.describe() << ": casting to ONNX data type " << to << (to == 8 ? " (string)" : "")
                                       << " is not supported");
  return one_output(ctx.input(0).cast(*dtype));
}

std::vector<Tensor> cast_like_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  return one_output(ctx.input(0).cast(ctx.input(1).dtype()));
}

std::vector<Tensor> identity_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, 1);
  return one_output(ctx.input(0));
}

// A scalar input read as double (Dropout's ratio and training_mode).
double scalar_value(const KernelContext& ctx, size_t index) {
  const Tensor& t = ctx.input(index);
  VKG_CHECK(t.size() == 1, ctx.node.describe()
                               << ": input " << index << " must be a scalar, got shape " << shape_to_string(t.shape()));
  return t.get_as_double(0);
}

// Dropout at inference: the output is the input and the optional mask is all true (all
// ones of the input's type before opset 10). Training mode with a non-zero ratio would
// need random numbers and is refused.
std::vector<Tensor> dropout_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, ctx.opset < 12 ? 1 : 3);
  const Tensor& x = ctx.input(0);
  if (ctx.opset >= 12 && ctx.has_input(2) && scalar_value(ctx, 2) != 0.0) {
    const double ratio = ctx.has_input(1) ? scalar_value(ctx, 1) : 0.5;
    VKG_CHECK(ratio == 0.0, ctx.node.describe() << ": training mode with ratio " << ratio
                                                << " is not supported by the reference backend (inference only)");
  }
  std::vector<Tensor> outputs;
  outputs.push_back(x);
  if (ctx.num_outputs() > 1) {
    const DType mask_type = ctx.opset < 10 ? x.dtype() : DType::Bool;
    Tensor mask(mask_type, x.shape());
    for (int64_t i = 0; i < mask.size(); ++i) mask.set_from_double(i, 1.0);
    outputs.push_back(std::move(mask));
  }
  return outputs;
}

}  // namespace

void register_conversion_ops(OpRegistry& registry) {
  registry.add("Cast", cast_kernel);
  registry.add("CastLike", cast_like_kernel);
  registry.add("Identity", identity_kernel);
  registry.add("Dropout", dropout_kernel);
}

}  // namespace vkg::elementwise
