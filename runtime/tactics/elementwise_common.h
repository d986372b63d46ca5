// What the elementwise family's planners share (elementwise.cpp registers them;
// elementwise_unary, _binary, _where, _cast and _batchnorm hold one kind each):
// the checks every elementwise tactic makes, how inputs broadcast to the output
// (merged dimensions and strides for the push constants), and the dispatch of
// one shader over the output's elements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"

namespace vkg::elementwise_tactics {

inline constexpr uint32_t kWorkgroupSize = 64;

// Scalar: one element per invocation. Vec4: four contiguous output elements.
enum class Blocking { Scalar, Vec4 };

// How an int32 device value stands for an ONNX integer or bool type
// (shaders/elementwise/math.glsl: KIND_*).
uint32_t int_kind(DType d);

inline bool is_int(const LayerTensor& t) { return t.storage == StorageType::I32; }

// Checks every elementwise tactic makes: the device can hold every tensor, an
// fp16 arithmetic has float tensors to compute on, and the element count fits
// the shaders' 32-bit indices.
bool common_checks(const LayerContext& ctx, std::string& why_not);

// How several inputs broadcast to the output: output dimensions of size 1
// dropped and neighbours merged where every input steps through both as
// through one (like the reference's make_broadcast_plan). The last stride of
// every input is 0 or 1.
struct Broadcast {
  uint32_t n = 0;
  std::vector<uint32_t> dims;                  // never empty
  std::vector<std::vector<uint32_t>> strides;  // per input, per merged dimension
};

// The last `apart` axes of the output stay dimensions of their own (sizes of 1 included), after
// the merged ones.
Broadcast merge_broadcast(const Shape& out, const std::vector<Shape>& inputs, size_t apart = 0);

// Whether the vec4 shaders can run a broadcast: rows of a multiple of 4
// elements, or one row (whose n % 4 tail the shaders take element by element).
bool vec4_serves(const Broadcast& b, std::string& why_not);

// The broadcast words of a push-constant block: rank, dims[max_rank], then per
// input strides[max_rank] (unused entries 0).
bool push_broadcast(const Broadcast& b, size_t max_rank, std::vector<uint32_t>& push, std::string& why_not);

// How a shader indexes one broadcast input (shaders/elementwise/binary.comp,
// where.comp: LAYOUT_*): the general strided form, or the two forms lavapipe
// can load without gathers.
uint32_t input_layout(const Shape& input, uint32_t n);

inline uint64_t invocations(uint64_t n, Blocking blocking) { return blocking == Blocking::Vec4 ? n / 4 + n % 4 : n; }

// One dispatch of `shader` with specialization constants 1.. from `spec`
// (constant 0 is the workgroup size), covering `count` invocations.
Dispatch make_dispatch(const LayerContext& ctx, const std::string& shader, const std::vector<uint32_t>& spec,
                       std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t count);

// ---------------------------------------------------------------------------
// The planners, one per kind, registered in elementwise.cpp.

// elementwise_unary.cpp
std::vector<std::string> unary_op_names();
std::optional<LayerPlan> plan_unary(const LayerContext& ctx, std::string& why_not, Blocking blocking);
// elementwise_binary.cpp
std::vector<std::string> binary_op_names();
std::optional<LayerPlan> plan_binary(const LayerContext& ctx, std::string& why_not, Blocking blocking);
// elementwise_where.cpp
std::optional<LayerPlan> plan_where(const LayerContext& ctx, std::string& why_not, Blocking blocking);
// elementwise_cast.cpp
std::optional<LayerPlan> plan_cast(const LayerContext& ctx, std::string& why_not, Blocking blocking);
std::optional<LayerPlan> plan_quantize(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_dynamic_quantize(const LayerContext& ctx, std::string& why_not);
// elementwise_batchnorm.cpp
std::optional<LayerPlan> plan_batchnorm(const LayerContext& ctx, std::string& why_not, Blocking blocking);

}  // namespace vkg::elementwise_tactics
