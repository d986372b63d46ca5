// Det (det.elimination): Gaussian elimination per matrix on a scratch copy.
// A gemm-family op by its inputs (square matrices), not by its shader.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/tactics/gemm_planners.h"

namespace vkg::gemm_tactics {

// Det: shaders/gemm/det.comp, one invocation per matrix eliminating on a scratch copy.
std::optional<LayerPlan> plan_det(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = std::string("Det does not take ") + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() >= 2 && x.shape.back() == x.shape[x.shape.size() - 2],
            ctx.node.describe() << ": the input must be square matrices [*, M, M], got " << shape_to_string(x.shape));
  const int64_t m = x.shape.back();
  const int64_t count = num_elements(Shape(x.shape.begin(), x.shape.end() - 2));
  LayerPlan plan;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, uint64_t(x.size()) * 4));
  Dispatch d;
  d.shader = ctx.shader("gemm/det");
  d.spec = {{0, 64}};
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::scratch(0), BindingRef::output(0)};
  d.push = {uint32_t(count), uint32_t(m)};
  d.groups = linear_groups(uint64_t(count), 64, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::gemm_tactics
