// The helpers shared by the movement kinds (declared in movement_common.h):
// variant and size checks, constant inputs, and the movement dispatches.
#include "runtime/tactics/movement_common.h"

#include "runtime/core/error.h"

namespace vkg::movement_tactics {

bool check_storage(const LayerContext& ctx, StorageType s, std::string& why_not) {
  switch (ctx.arith) {
    case Arith::F32:
      if (s == StorageType::F32 || s == StorageType::I32) return true;
      why_not = "the f32 variant moves 32-bit elements, not " + std::string(storage_type_name(s));
      return false;
    case Arith::F16:
      if (s == StorageType::F16) return true;
      why_not =
          "the f16 variant moves float16 elements only (this tensor is " + std::string(storage_type_name(s)) + ")";
      return false;
    case Arith::F16Acc32:
      why_not = "movement tactics have no f16acc32 variant";
      return false;
  }
  return false;
}

bool check_data(const LayerContext& ctx, const std::vector<const LayerTensor*>& tensors, std::string& why_not) {
  for (const LayerTensor* t : tensors) {
    if (!check_storage(ctx, t->storage, why_not)) return false;
    if (t->size() > kMaxElements) {
      why_not = "tensor '" + t->name + "' has more than 2^31 elements";
      return false;
    }
  }
  return true;
}

bool require_constant(const LayerContext& ctx, size_t i, std::string& why_not) {
  if (!ctx.has_input(i) || ctx.inputs[i].is_constant()) return true;
  why_not = "input " + std::to_string(i) + " ('" + ctx.inputs[i].name + "') is not a build-time constant";
  return false;
}

std::vector<int64_t> constant_ints(const LayerContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.constant_input(i);
  VKG_CHECK(!is_floating(t.dtype()) && t.dtype() != DType::Bool,
            ctx.node.describe() << ": " << what << " must be integers, got " << t.describe());
  return t.to_int64s();
}

std::vector<int64_t> normalize_axes(const LayerContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t a : axes) {
    VKG_CHECK(a >= -rank && a < rank, ctx.node.describe() << ": axis " << a << " is out of range for rank " << rank);
    const int64_t n = a < 0 ? a + rank : a;
    VKG_CHECK(!seen[size_t(n)], ctx.node.describe() << ": axis " << a << " is repeated");
    seen[size_t(n)] = true;
    out.push_back(n);
  }
  return out;
}

bool same_shape(const Shape& computed, const LayerTensor& out, std::string& why_not) {
  if (computed == out.shape) return true;
  why_not =
      "computed output shape " + shape_to_string(computed) + " differs from the layer's " + shape_to_string(out.shape);
  return false;
}

Dispatch make_dispatch(const LayerContext& ctx, const std::string& shader, std::vector<SpecValue> spec,
                       std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t invocations) {
  Dispatch d;
  d.shader = ctx.shader("movement/" + shader);
  d.spec = {{0, kLocalSize}};
  d.spec.insert(d.spec.end(), spec.begin(), spec.end());
  d.bindings = std::move(bindings);
  d.push = std::move(push);
  d.groups = linear_groups(invocations, kLocalSize, ctx.device);
  return d;
}

Dispatch copy_dispatch(const LayerContext& ctx, BindingRef src, BindingRef dst, int64_t n, bool vec4) {
  const uint64_t invocations = vec4 ? uint64_t(n / 4 + n % 4) : uint64_t(n);
  return make_dispatch(ctx, "copy", {{1, vec4 ? 4u : 1u}}, {src, dst}, {uint32_t(n)}, invocations);
}

std::optional<double> constant_scalar(const LayerContext& ctx, size_t i, std::string& why_not) {
  if (!require_constant(ctx, i, why_not)) return std::nullopt;
  const Tensor& t = ctx.constant_input(i);
  VKG_CHECK(t.size() == 1, ctx.node.describe() << ": input " << i << " must be a scalar, got " << t.describe());
  return t.get_as_double(0);
}

Tensor meta_tensor(std::vector<int32_t> values) {
  if (values.empty()) values.push_back(0);
  const int64_t n = int64_t(values.size());
  return Tensor::from_vector<int32_t>({n}, values);
}

}  // namespace vkg::movement_tactics
