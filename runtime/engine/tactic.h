// Tactics: named implementations of an op family on Vulkan (DESIGN.md, "The
// builder"). A tactic is a pure function from a layer (node, shapes, dtypes,
// constant inputs, precision) to a LayerPlan: plain data naming the shaders,
// specialization constants, bindings, push constants, group counts, packed
// weights and scratch memory. The builder times plans, the engine file stores
// them and the executor records them; a tactic never touches Vulkan itself.
//
// Adding a tactic = its shader in shaders/<family>/ plus one registration in
// runtime/tactics/<family>.cpp (see docs/adding-a-tactic.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"
#include "runtime/engine/device_profile.h"
#include "runtime/engine/layer_signature.h"

namespace vkg {

// How a tensor is stored in a device buffer.
enum class StorageType : uint8_t {
  F32,  // float32 (float32, float16 and bfloat16 tensors of fp32 layers)
  F16,  // float16 (float tensors of fp16 layers)
  I32,  // int32 (every integer and bool tensor; int64 values must fit in int32)
};
const char* storage_type_name(StorageType s);  // "f32", "f16", "i32"
std::optional<StorageType> parse_storage_type(std::string_view text);
size_t storage_element_bytes(StorageType s);

// True for the dtypes a layer's precision applies to (float32, float16, bfloat16).
bool is_float_dtype(DType d);
// The device storage of a tensor of `dtype` in a layer built in `precision`;
// nullopt for dtypes the Vulkan backend cannot hold (float64, strings, uint64).
std::optional<StorageType> storage_for(DType dtype, Precision precision);

// Host conversions between a tensor and its device storage form (a float32,
// float16 or int32 tensor of the same shape). to_storage throws Error naming
// `what` when an integer does not fit in int32. from_storage moves a tensor
// already of `dtype` instead of copying it.
DType storage_dtype(StorageType s);  // the dtype of that form: float32, float16 or int32
Tensor to_storage(const Tensor& t, StorageType s, const std::string& what);
Tensor from_storage(Tensor stored, DType dtype);

// The arithmetic of a tactic: its shader variant (shaders/common/precision.glsl).
enum class Arith : uint8_t { F32, F16, F16Acc32 };
const char* arith_name(Arith a);  // "f32", "f16", "f16acc32": the shader variant suffix
Precision arith_precision(Arith a);  // F32 -> FP32, the others -> FP16

// One 32-bit specialization constant of a dispatch.
struct SpecValue {
  uint32_t id = 0;
  uint32_t value = 0;
  bool operator==(const SpecValue&) const = default;
};

// What a binding of a dispatch refers to.
struct BindingRef {
  enum class Kind : uint8_t { Input, Output, Weight, Scratch };
  Kind kind = Kind::Input;
  uint32_t index = 0;  // layer input/output position, or index into LayerPlan::weights / scratch_bytes
  bool operator==(const BindingRef&) const = default;

  static BindingRef input(uint32_t i) { return {Kind::Input, i}; }
  static BindingRef output(uint32_t i) { return {Kind::Output, i}; }
  static BindingRef weight(uint32_t i) { return {Kind::Weight, i}; }
  static BindingRef scratch(uint32_t i) { return {Kind::Scratch, i}; }
};
const char* binding_kind_name(BindingRef::Kind k);  // "input", "output", "weight", "scratch"

// One compute dispatch: storage buffer i of set 0 is bindings[i].
struct Dispatch {
  std::string shader;               // builtin shader variant, e.g. "gemm/tiled.f16acc32"
  std::vector<SpecValue> spec;      // specialization constants (constant_id 0 is the workgroup size by convention)
  std::vector<BindingRef> bindings;
  std::vector<uint32_t> push;       // push-constant words (at most 32: 128 bytes)
  std::array<uint32_t, 3> groups = {1, 1, 1};
  // Required subgroup size (DeviceProfile::subgroup_size_control), with full
  // subgroups where the workgroup size allows; 0: the driver's choice.
  uint32_t subgroup_size = 0;
  bool operator==(const Dispatch&) const = default;
};

// How a tactic runs one layer. Dispatches run in order, each seeing the
// writes of the ones before.
struct LayerPlan {
  std::vector<Dispatch> dispatches;
  // Constant data already in device storage form (float32, float16 or int32
  // tensors): packed weights, folded constant inputs, index tables.
  std::vector<Tensor> weights;
  std::vector<uint64_t> scratch_bytes;  // temporary buffers live only during the layer
  // A copy of a contiguous range of input 0 (in storage order, from this element on) into output
  // 0 (a Slice of whole rows, a Transpose that moves only axes of extent 1): the builder may make
  // the output a view of the input instead of running the layer (builder/memory.cpp,
  // eliminate_range_copies), and clears it in the engines it builds. -1: not such a copy.
  int64_t input_range = -1;
  bool operator==(const LayerPlan& o) const;
};

// One input or output of a layer as a tactic sees it.
struct LayerTensor {
  std::string name;  // "" for an omitted optional input/output
  DType dtype = DType::Float32;
  Shape shape;
  StorageType storage = StorageType::F32;
  const Tensor* constant = nullptr;  // the value when known at build time (then not bound as an input)

  bool present() const { return !name.empty(); }
  bool is_constant() const { return constant != nullptr; }
  int64_t size() const { return num_elements(shape); }
};

// What a tactic sees of the layer it is asked to serve.
struct LayerContext {
  const Node& node;
  int64_t opset = 0;
  Precision precision = Precision::FP32;
  Arith arith = Arith::F32;  // the arithmetic of the tactic being asked
  std::vector<LayerTensor> inputs;   // per node input, omitted ones included
  std::vector<LayerTensor> outputs;  // per node output
  const DeviceProfile& device;

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present(); }
  // Throws Error naming the node when the input is absent.
  const LayerTensor& input(size_t i) const;
  const LayerTensor& output(size_t i) const;
  // The builtin shader variant of `base` for this arithmetic: "gemm/tiled" -> "gemm/tiled.f16acc32".
  std::string shader(const std::string& base) const;
  // shader(base) of a cooperative-matrix shader (one marked `vkgraphy-coopmat-khr`): its "_khr" build
  // where the device's cooperative matrices are VK_KHR_cooperative_matrix's, else the NV one.
  std::string coopmat_shader(const std::string& base) const;
  // The constant value of input i; throws Error naming the node when it is not a build-time constant.
  const Tensor& constant_input(size_t i) const;
  // True when the device reads through uniform texel buffers (device feature texel-buffers) and a
  // binding of `elements` floats fits one view of vec4 texels: shaders with a texel build use it.
  // `wide_stores`: the texel build also stores eight values at a time (VKG_OUTPUT8), which in
  // fp32 needs the device's 64-bit integers.
  bool texel_reads(uint64_t elements, bool wide_stores = false) const;
  // shader(base), or its "_texel" build (a shader marked `vkgraphy-texel-reads`, cmake/shaders.cmake)
  // where texel_reads(elements, wide_stores) holds for its largest texel binding.
  std::string texel_shader(const std::string& base, uint64_t elements, bool wide_stores = false) const;
};

// The binding for input i of a layer: the runtime tensor, or (for a build-time
// constant) a weight added to `plan` in the input's storage form.
BindingRef bind_input(const LayerContext& ctx, LayerPlan& plan, size_t i);
// Adds `t` (float32/float16/int32, already in storage form) to plan.weights; returns its binding.
BindingRef add_weight(LayerPlan& plan, Tensor t);

// Declines (false, why_not set) when a tensor of `bytes` does not fit one storage buffer binding
// of the device or its `elements` do not fit 32-bit shader indices; `what` names it.
bool fits_binding(const LayerContext& ctx, uint64_t bytes, uint64_t elements, const std::string& what,
                  std::string& why_not);
// fits_binding for every present input and output of the layer.
bool fits_tensors(const LayerContext& ctx, std::string& why_not);
// The storage of a layer whose input X and output 0 are float tensors, when the asking tactic's
// arithmetic computes on it (fp32 for .f32, fp16 for .f16 and .f16acc32, on a device with fp16)
// and its tensors fit their bindings; nullopt (why_not set) otherwise, float64 inputs included.
std::optional<StorageType> float_storage(const LayerContext& ctx, std::string& why_not);

// Group counts covering `invocations` one-dimensional invocations with
// workgroups of `local_size`, spread over x and y so that no count exceeds the
// device's limits. Shaders read the linear index with vkg_linear_index()
// (shaders/common/index.glsl). Throws Error when even that does not fit.
std::array<uint32_t, 3> linear_groups(uint64_t invocations, uint32_t local_size, const DeviceProfile& device);
// Whether invocations that each loop `iterations` times stay within the device's loop iteration
// limit (DeviceProfile::loop_iteration_limit, lavapipe's) divided by `margin`: 2 for shaders
// without barriers, 8 with (the limit then counts in ways the shader cannot see). Fills
// `why_not` when they do not: past the limit a loop silently stops early.
bool loops_fit_device(const LayerContext& ctx, uint64_t iterations, uint32_t margin, std::string& why_not);

// Specialization constant 40 (kF32Bindings, shaders/common/f32_bindings.glsl): in an f16 variant,
// bit b says binding b holds fp32 (a fused reformat).
inline constexpr uint32_t kF32BindingsSpec = 40;

// The storage-buffer build of a shader variant: "gemm/block_texel.f16" -> "gemm/block.f16" (a
// "_texel" build, cmake/shaders.cmake); any other name as it is.
std::string storage_build(const std::string& shader);
inline bool is_texel_build(const std::string& shader) { return storage_build(shader) != shader; }

// Specialization constant 39 of shaders including common/index.glsl (vkg_small_indices): 1 when
// every index the shader divides (vkg_div) is below 2^21, which lets it divide through floats.
inline constexpr uint32_t kSmallIndicesSpec = 39;
inline SpecValue small_indices_spec(uint64_t largest_index) {
  return {kSmallIndicesSpec, largest_index < (uint64_t(1) << 21) ? 1u : 0u};
}

// A tactic: a name, the ops it serves, and its planner. plan() returns nullopt
// with `why_not` filled when it cannot serve the layer (shape, attribute,
// dtype or device limits). It throws only for layers that are invalid ONNX.
struct Tactic {
  std::string name;              // stable and readable: "gemm.tile4x4.f32"
  std::vector<std::string> ops;  // ONNX op types served
  Arith arith = Arith::F32;
  int priority = 0;              // heuristic order: lower first (optimization level 0 takes the first that serves)
  std::function<std::optional<LayerPlan>(const LayerContext&, std::string& why_not)> plan;
  // A named device property the tactic needs (DeviceProfile::has_feature), "" for none;
  // the planner declines on devices without it.
  std::string device_feature = {};
  // The heuristic order on GPUs (devices that are not CPU drivers), where the shared-memory and
  // tensor-core forms belong among the first candidates a build times; -1: `priority` there too.
  int gpu_priority = -1;
  // The heuristic order of an fp16-arithmetic variant (Arith::F16) on a device whose fp16
  // arithmetic is slower than its fp32 (DeviceProfile::fp16_slower: lavapipe, which computes each
  // fp16 operation through fp32), where a form's fp16 code can rank otherwise than its fp32 code;
  // -1: `priority` there too.
  int slow_fp16_priority = -1;

  Precision precision() const { return arith_precision(arith); }
  // `gpu_priority` on a device that is not a CPU driver, `slow_fp16_priority` for an fp16 variant
  // where fp16 is slower, else `priority`.
  int priority_on(const DeviceProfile& device) const;
};

class TacticRegistry {
 public:
  // Throws Error when a tactic of that name exists or the tactic is incomplete.
  void add(Tactic tactic);
  // What the variants of a tactic share besides their name, ops, priority and planner: the
  // fields of Tactic of the same names.
  struct Traits {
    int gpu_priority = -1;
    std::string device_feature = {};
    int slow_fp16_priority = -1;  // for the Arith::F16 variant only
  };
  // Registers `base.<arith>` for each arithmetic in `variants`, with the same planner and traits.
  void add_variants(const std::string& base, std::vector<std::string> ops, int priority,
                    std::initializer_list<Arith> variants,
                    std::function<std::optional<LayerPlan>(const LayerContext&, std::string&)> plan,
                    const Traits& traits);
  void add_variants(const std::string& base, std::vector<std::string> ops, int priority,
                    std::initializer_list<Arith> variants,
                    std::function<std::optional<LayerPlan>(const LayerContext&, std::string&)> plan) {
    add_variants(base, std::move(ops), priority, variants, std::move(plan), Traits{});
  }

  const Tactic* find(const std::string& name) const;
  // Tactics serving `op`, by priority then name.
  std::vector<const Tactic*> for_op(const std::string& op) const;
  std::vector<const Tactic*> all() const;  // by name
  std::vector<std::string> ops() const;    // every op served, sorted

  // Every builtin tactic (runtime/tactics/).
  static const TacticRegistry& builtin();

 private:
  std::map<std::string, Tactic> tactics_;
};

// One registration function per family file in runtime/tactics/.
void register_elementwise_tactics(TacticRegistry& r);
void register_gemm_tactics(TacticRegistry& r);
void register_conv_tactics(TacticRegistry& r);
void register_reduce_tactics(TacticRegistry& r);    // reductions, arg-reductions, softmax, normalization
void register_pool_tactics(TacticRegistry& r);      // pooling, global pooling, unpooling
void register_movement_tactics(TacticRegistry& r);  // copies, transposes, concat/split/slice, expand/tile/pad
void register_gather_tactics(TacticRegistry& r);    // gathers, scatters, resize
void register_recurrent_tactics(TacticRegistry& r); // RNN, GRU, LSTM
void register_attention_tactics(TacticRegistry& r); // RotaryEmbedding, Attention
void register_einsum_tactics(TacticRegistry& r);    // Einsum
void register_signal_tactics(TacticRegistry& r);    // DFT, STFT

// Shell-style glob ('*', '?') used by --tactics-allow / --tactics-deny.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace vkg
