// BatchNormalization at inference (batchnorm.vec4, batchnorm.scalar): one
// scale and shift per channel. A BatchNormalization that follows a Conv or Gemm
// is folded into its weights by the graph optimizer; this serves the rest.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/tactics/elementwise_common.h"

namespace vkg::elementwise_tactics {

std::optional<LayerPlan> plan_batchnorm(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  if (ctx.opset >= 14
          ? node.attr_int("training_mode", 0) != 0
          : std::any_of(ctx.outputs.begin() + 1, ctx.outputs.end(), [](const LayerTensor& t) { return t.present(); })) {
    why_not = "training mode (batch statistics) is not supported; only inference";
    return std::nullopt;
  }
  const LayerTensor& x = ctx.input(0);
  if (!is_floating(x.dtype)) {
    why_not = std::string("BatchNormalization does not take ") + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() >= 2,
            node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << shape_to_string(x.shape));
  const int64_t channels = x.shape[1];
  const int64_t spatial = num_elements(Shape(x.shape.begin() + 2, x.shape.end()));
  std::vector<double> params[4];  // scale, B, mean, var
  const char* names[4] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 0; i < 4; ++i) {
    const LayerTensor& t = ctx.input(i + 1);
    if (!t.is_constant()) {
      why_not = std::string(names[i]) + " ('" + t.name + "') is not a build-time constant";
      return std::nullopt;
    }
    params[i] = t.constant->to_doubles();
  }
  const int64_t count = int64_t(params[0].size());
  for (size_t i = 0; i < 4; ++i) {
    VKG_CHECK(int64_t(params[i].size()) == count && (count == channels || count == channels * spatial),
              node.describe() << ": " << names[i] << " has shape " << shape_to_string(ctx.input(i + 1).shape)
                              << ", expected [" << channels << "] for an input of shape " << shape_to_string(x.shape));
  }
  const bool per_position = count != channels;
  const uint32_t inner = uint32_t(std::max<int64_t>(1, per_position ? 1 : spatial));
  const uint32_t n = uint32_t(x.size());
  if (blocking == Blocking::Vec4 && !(inner % 4 == 0 || (inner == 1 && count % 4 == 0))) {
    why_not = "neither the spatial size nor (for one element per channel) the channel count is a multiple of 4";
    return std::nullopt;
  }
  // y = (x - mean) / sqrt(var + epsilon) * scale + B = x * a + b
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  Tensor folded(DType::Float32, {2 * count});
  float* ab = folded.data<float>();
  for (int64_t p = 0; p < count; ++p) {
    const size_t i = size_t(p);
    const double a = params[0][i] / std::sqrt(params[3][i] + epsilon);
    ab[p] = float(a);
    ab[count + p] = float(params[1][i] - params[2][i] * a);
  }
  LayerPlan plan;
  const BindingRef in = bind_input(ctx, plan, 0);
  const BindingRef weights = add_weight(plan, std::move(folded));
  plan.dispatches.push_back(make_dispatch(
      ctx, "elementwise/batchnorm", {blocking == Blocking::Vec4 ? 4u : 1u}, {in, weights, BindingRef::output(0)},
      {n, inner, uint32_t(std::max<int64_t>(1, count))}, blocking == Blocking::Vec4 ? n / 4 : n));
  return plan;
}

}  // namespace vkg::elementwise_tactics
