// The helpers shared by the elementwise kinds (declared in elementwise_common.h):
// common checks, broadcast merging and the one-shader dispatch.
#include "runtime/tactics/elementwise_common.h"

#include <cstring>
#include <limits>
#include <utility>

namespace vkg::elementwise_tactics {

namespace {

enum class IntKind : uint32_t { I32 = 0, I8 = 1, I16 = 2, U8 = 3, U16 = 4, U32 = 5, Bool = 6 };

}  // namespace

uint32_t int_kind(DType d) {
  IntKind k = IntKind::I32;
  switch (d) {
    case DType::Int8:
      k = IntKind::I8;
      break;
    case DType::Int16:
      k = IntKind::I16;
      break;
    case DType::UInt8:
      k = IntKind::U8;
      break;
    case DType::UInt16:
      k = IntKind::U16;
      break;
    case DType::UInt32:
      k = IntKind::U32;
      break;
    case DType::Bool:
      k = IntKind::Bool;
      break;
    case DType::Int32:
    case DType::Int64:
    case DType::UInt64:
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
      break;
  }
  return uint32_t(k);
}

bool common_checks(const LayerContext& ctx, std::string& why_not) {
  bool any_float = false;
  for (const auto* list : {&ctx.inputs, &ctx.outputs}) {
    for (const LayerTensor& t : *list) {
      if (!t.present()) continue;
      if (!storage_for(t.dtype, ctx.precision)) {
        why_not = "tensor '" + t.name + "' has type " + dtype_name(t.dtype) + ", which Vulkan layers cannot hold";
        return false;
      }
      any_float = any_float || is_float_dtype(t.dtype);
      if (uint64_t(t.size()) > std::numeric_limits<uint32_t>::max()) {
        why_not = "tensor '" + t.name + "' has more than 2^32 - 1 elements";
        return false;
      }
    }
  }
  if (ctx.arith != Arith::F32 && !any_float) {
    why_not = "no float tensors: the f32 variant serves integer and bool layers";
    return false;
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device has no fp16 arithmetic or 16-bit storage";
    return false;
  }
  return true;
}

Broadcast merge_broadcast(const Shape& out, const std::vector<Shape>& inputs, size_t apart) {
  std::vector<std::vector<int64_t>> full;
  for (const Shape& s : inputs) full.push_back(broadcast_strides(s, out));
  Broadcast b;
  b.n = uint32_t(num_elements(out));
  b.strides.assign(inputs.size(), {});
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t size = out[d];
    const bool own = d + apart >= out.size();
    if (own && b.dims.empty()) {  // the merged axes were all of size 1, or none
      b.dims.push_back(1);
      for (auto& s : b.strides) s.push_back(0);
    }
    if (size == 1 && !own) continue;
    bool mergeable = !b.dims.empty() && !own;
    for (size_t i = 0; i < inputs.size() && mergeable; ++i) mergeable = b.strides[i].back() == full[i][d] * size;
    if (mergeable) {
      b.dims.back() *= uint32_t(size);
      for (size_t i = 0; i < inputs.size(); ++i) b.strides[i].back() = uint32_t(full[i][d]);
    } else {
      b.dims.push_back(uint32_t(size));
      for (size_t i = 0; i < inputs.size(); ++i) b.strides[i].push_back(uint32_t(full[i][d]));
    }
  }
  if (b.dims.empty()) {  // a single element
    b.dims.push_back(1);
    for (auto& s : b.strides) s.push_back(0);
  }
  return b;
}

bool vec4_serves(const Broadcast& b, std::string& why_not) {
  if (b.dims.size() == 1 || b.dims.back() % 4 == 0) return true;
  why_not = "the innermost broadcast dimension (" + std::to_string(b.dims.back()) + ") is not a multiple of 4";
  return false;
}

bool push_broadcast(const Broadcast& b, size_t max_rank, std::vector<uint32_t>& push, std::string& why_not) {
  if (b.dims.size() > max_rank) {
    why_not = "the broadcast needs " + std::to_string(b.dims.size()) + " dimensions, more than the shader's " +
              std::to_string(max_rank);
    return false;
  }
  auto append = [&](const std::vector<uint32_t>& v) {
    for (size_t i = 0; i < max_rank; ++i) push.push_back(i < v.size() ? v[i] : 0);
  };
  append(b.dims);
  for (const auto& s : b.strides) append(s);
  return true;
}

uint32_t input_layout(const Shape& input, uint32_t n) {
  const int64_t size = num_elements(input);
  if (size == int64_t(n)) return 1;  // identity: the output's elements
  if (size == 1) return 2;           // a single element
  return 0;                          // strided
}

Dispatch make_dispatch(const LayerContext& ctx, const std::string& shader, const std::vector<uint32_t>& spec,
                       std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t count) {
  Dispatch d;
  d.shader = ctx.shader(shader);
  d.spec.push_back({0, kWorkgroupSize});
  for (size_t i = 0; i < spec.size(); ++i) d.spec.push_back({uint32_t(i + 1), spec[i]});
  d.bindings = std::move(bindings);
  d.push = std::move(push);
  d.groups = linear_groups(count, kWorkgroupSize, ctx.device);
  return d;
}

}  // namespace vkg::elementwise_tactics
