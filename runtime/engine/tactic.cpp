#include "runtime/engine/tactic.h"

#include <algorithm>
#include <limits>

#include "runtime/core/error.h"

namespace vkg {

const char* storage_type_name(StorageType s) {
  switch (s) {
    case StorageType::F32: return "f32";
    case StorageType::F16: return "f16";
    case StorageType::I32: return "i32";
  }
  return "?";
}

std::optional<StorageType> parse_storage_type(std::string_view text) {
  if (text == "f32") return StorageType::F32;
  if (text == "f16") return StorageType::F16;
  if (text == "i32") return StorageType::I32;
  return std::nullopt;
}

size_t storage_element_bytes(StorageType s) {
  switch (s) {
    case StorageType::F32: return 4;
    case StorageType::F16: return 2;
    case StorageType::I32: return 4;
  }
  return 4;
}

bool is_float_dtype(DType d) { return d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16; }

std::optional<StorageType> storage_for(DType dtype, Precision precision) {
  switch (dtype) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
      return precision == Precision::FP16 ? StorageType::F16 : StorageType::F32;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::Bool:
      return StorageType::I32;
    case DType::Float64:
    case DType::UInt64:
      return std::nullopt;
  }
  return std::nullopt;
}

Tensor to_storage(const Tensor& t, StorageType s, const std::string& what) {
  switch (s) {
    case StorageType::F32: return t.dtype() == DType::Float32 ? t : t.cast(DType::Float32);
    case StorageType::F16: return t.dtype() == DType::Float16 ? t : t.cast(DType::Float16);
    case StorageType::I32: {
      if (t.dtype() == DType::Int32) return t;
      Tensor out(DType::Int32, t.shape());
      int32_t* dst = out.data<int32_t>();
      if (is_floating(t.dtype())) return t.cast(DType::Int32);
      const std::vector<int64_t> values = t.to_int64s();
      for (size_t i = 0; i < values.size(); ++i) {
        const int64_t v = values[i];
        VKG_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                  what << ": value " << v << " at element " << i
                       << " does not fit in int32, the device storage of integer tensors");
        dst[i] = int32_t(v);
      }
      return out;
    }
  }
  return t;
}

DType storage_dtype(StorageType s) {
  switch (s) {
    case StorageType::F32:
      return DType::Float32;
    case StorageType::F16:
      return DType::Float16;
    case StorageType::I32:
      return DType::Int32;
  }
  return DType::Float32;
}

Tensor from_storage(Tensor stored, DType dtype) {
  if (stored.dtype() == dtype) return stored;
  if (dtype == DType::Bool) {
    Tensor out(DType::Bool, stored.shape());
    const int32_t* src = stored.data<int32_t>();
    for (int64_t i = 0; i < out.size(); ++i) out.data<bool>()[i] = src[i] != 0;
    return out;
  }
  return stored.cast(dtype);
}

const char* arith_name(Arith a) {
  switch (a) {
    case Arith::F32: return "f32";
    case Arith::F16: return "f16";
    case Arith::F16Acc32: return "f16acc32";
  }
  return "?";
}

Precision arith_precision(Arith a) {
  switch (a) {
    case Arith::F32: return Precision::FP32;
    case Arith::F16: return Precision::FP16;
    case Arith::F16Acc32: return Precision::FP16;
  }
  return Precision::FP32;
}

const char* binding_kind_name(BindingRef::Kind k) {
  switch (k) {
    case BindingRef::Kind::Input: return "input";
    case BindingRef::Kind::Output: return "output";
    case BindingRef::Kind::Weight: return "weight";
    case BindingRef::Kind::Scratch: return "scratch";
  }
  return "?";
}

bool LayerPlan::operator==(const LayerPlan& o) const {
  if (dispatches != o.dispatches || scratch_bytes != o.scratch_bytes || input_range != o.input_range ||
      weights.size() != o.weights.size())
    return false;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i].shape() != o.weights[i].shape() || !weights[i].bit_equal(o.weights[i])) return false;
  }
  return true;
}

const LayerTensor& LayerContext::input(size_t i) const {
  VKG_CHECK(has_input(i), node.describe() << ": input " << i << " is required");
  return inputs[i];
}

const LayerTensor& LayerContext::output(size_t i) const {
  VKG_CHECK(i < outputs.size() && outputs[i].present(), node.describe() << ": output " << i << " is required");
  return outputs[i];
}

std::string LayerContext::shader(const std::string& base) const { return base + "." + arith_name(arith); }

std::string LayerContext::coopmat_shader(const std::string& base) const {
  if (device.cooperative_matrix_emulated) return shader(base + "_emu");
  return shader(device.cooperative_matrix_khr ? base + "_khr" : base);
}

bool LayerContext::texel_reads(uint64_t elements, bool wide_stores) const {
  return device.texel_buffers && (elements + 3) / 4 <= device.max_texel_buffer_elements &&
         (!wide_stores || arith != Arith::F32 || device.shader_int64);
}

std::string storage_build(const std::string& shader) {
  std::string name = shader;
  if (const size_t at = name.rfind("_texel."); at != std::string::npos) name.erase(at, std::string("_texel").size());
  return name;
}

std::string LayerContext::texel_shader(const std::string& base, uint64_t elements, bool wide_stores) const {
  return shader(texel_reads(elements, wide_stores) ? base + "_texel" : base);
}

const Tensor& LayerContext::constant_input(size_t i) const {
  const LayerTensor& t = input(i);
  VKG_CHECK(t.constant != nullptr, node.describe() << ": input " << i << " ('" << t.name
                                                   << "') must be a constant (an initializer or a folded subgraph) "
                                                      "to run on Vulkan");
  return *t.constant;
}

BindingRef add_weight(LayerPlan& plan, Tensor t) {
  VKG_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float16 || t.dtype() == DType::Int32,
            "a packed weight must be float32, float16 or int32, not " << dtype_name(t.dtype()));
  plan.weights.push_back(std::move(t));
  return BindingRef::weight(uint32_t(plan.weights.size() - 1));
}

BindingRef bind_input(const LayerContext& ctx, LayerPlan& plan, size_t i) {
  const LayerTensor& t = ctx.input(i);
  if (!t.is_constant()) return BindingRef::input(uint32_t(i));
  return add_weight(plan, to_storage(*t.constant, t.storage, ctx.node.describe() + " input '" + t.name + "'"));
}

bool loops_fit_device(const LayerContext& ctx, uint64_t iterations, uint32_t margin, std::string& why_not) {
  const uint32_t limit = ctx.device.loop_iteration_limit;
  if (limit == 0 || iterations <= limit / std::max<uint32_t>(margin, 1)) return true;
  why_not = "its invocations would loop about " + std::to_string(iterations) + " times, past what device '" +
            ctx.device.name + "' runs correctly (loop iteration limit " + std::to_string(limit) + ")";
  return false;
}

std::array<uint32_t, 3> linear_groups(uint64_t invocations, uint32_t local_size, const DeviceProfile& device) {
  const uint64_t groups = std::max<uint64_t>(1, (invocations + local_size - 1) / local_size);
  const uint64_t max_x = std::max<uint32_t>(1, device.max_workgroup_count[0]);
  const uint64_t max_y = std::max<uint32_t>(1, device.max_workgroup_count[1]);
  if (groups <= max_x) return {uint32_t(groups), 1, 1};
  const uint64_t y = (groups + max_x - 1) / max_x;
  VKG_CHECK(y <= max_y, invocations << " invocations need more workgroups than the device allows");
  return {uint32_t(max_x), uint32_t(y), 1};
}

void TacticRegistry::add(Tactic tactic) {
  VKG_CHECK(!tactic.name.empty() && !tactic.ops.empty() && tactic.plan, "incomplete tactic '" << tactic.name << "'");
  const std::string name = tactic.name;
  VKG_CHECK(tactics_.emplace(name, std::move(tactic)).second, "tactic '" << name << "' is registered twice");
}

void TacticRegistry::add_variants(const std::string& base, std::vector<std::string> ops, int priority,
                                  std::initializer_list<Arith> variants,
                                  std::function<std::optional<LayerPlan>(const LayerContext&, std::string&)> plan,
                                  const Traits& traits) {
  for (Arith a : variants) {
    Tactic t{base + "." + arith_name(a), ops, a, priority, plan, traits.device_feature};
    t.gpu_priority = traits.gpu_priority;
    if (a == Arith::F16) t.slow_fp16_priority = traits.slow_fp16_priority;
    add(std::move(t));
  }
}

const Tactic* TacticRegistry::find(const std::string& name) const {
  auto it = tactics_.find(name);
  return it == tactics_.end() ? nullptr : &it->second;
}

int Tactic::priority_on(const DeviceProfile& device) const {
  if (gpu_priority >= 0 && device.type != DeviceType::Cpu) return gpu_priority;
  if (slow_fp16_priority >= 0 && arith == Arith::F16 && device.fp16_slower) return slow_fp16_priority;
  return priority;
}

std::vector<const Tactic*> TacticRegistry::for_op(const std::string& op) const {
  std::vector<const Tactic*> out;
  for (const auto& [name, t] : tactics_) {
    if (std::find(t.ops.begin(), t.ops.end(), op) != t.ops.end()) out.push_back(&t);
  }
  std::stable_sort(out.begin(), out.end(), [](const Tactic* a, const Tactic* b) { return a->priority < b->priority; });
  return out;
}

std::vector<const Tactic*> TacticRegistry::all() const {
  std::vector<const Tactic*> out;
  for (const auto& [name, t] : tactics_) out.push_back(&t);
  return out;
}

std::vector<std::string> TacticRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tactics_) out.insert(out.end(), t.ops.begin(), t.ops.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const TacticRegistry& TacticRegistry::builtin() {
  static const TacticRegistry registry = [] {
    TacticRegistry r;
    register_elementwise_tactics(r);
    register_gemm_tactics(r);
    register_conv_tactics(r);
    register_reduce_tactics(r);
    register_pool_tactics(r);
    register_movement_tactics(r);
    register_gather_tactics(r);
    register_recurrent_tactics(r);
    register_attention_tactics(r);
    register_einsum_tactics(r);
    register_signal_tactics(r);
    return r;
  }();
  return registry;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1, t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool fits_binding(const LayerContext& ctx, uint64_t bytes, uint64_t elements, const std::string& what,
                  std::string& why_not) {
  const uint64_t range = ctx.device.max_storage_buffer_range;
  if (range != 0 && bytes > range) {
    why_not = what + " needs " + std::to_string(bytes) + " bytes, more than the device's storage buffer range of " +
              std::to_string(range);
    return false;
  }
  if (elements > uint64_t(std::numeric_limits<int32_t>::max())) {
    why_not = what + " has more elements than 32-bit shader indices address";
    return false;
  }
  return true;
}

bool fits_tensors(const LayerContext& ctx, std::string& why_not) {
  for (const LayerTensor& t : ctx.inputs) {
    if (t.present() && !fits_binding(ctx, uint64_t(t.size()) * storage_element_bytes(t.storage), uint64_t(t.size()),
                                     "input '" + t.name + "'", why_not))
      return false;
  }
  for (const LayerTensor& t : ctx.outputs) {
    if (t.present() && !fits_binding(ctx, uint64_t(t.size()) * storage_element_bytes(t.storage), uint64_t(t.size()),
                                     "output '" + t.name + "'", why_not))
      return false;
  }
  return true;
}

std::optional<StorageType> float_storage(const LayerContext& ctx, std::string& why_not) {
  for (const LayerTensor& t : ctx.inputs) {
    if (t.present() && t.dtype == DType::Float64) {
      why_not = "float64 is not supported on Vulkan";
      return std::nullopt;
    }
  }
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = std::string("input X has type ") + dtype_name(x.dtype) + ", expected a float type";
    return std::nullopt;
  }
  const StorageType want = ctx.arith == Arith::F32 ? StorageType::F32 : StorageType::F16;
  if (x.storage != want || ctx.output(0).storage != want) {
    why_not = std::string("the layer is stored as ") + storage_type_name(x.storage) + ", this tactic computes on " +
              storage_type_name(want);
    return std::nullopt;
  }
  if (want == StorageType::F16 && !ctx.device.fp16()) {
    why_not = "the device has no fp16 arithmetic and storage";
    return std::nullopt;
  }
  if (!fits_tensors(ctx, why_not)) return std::nullopt;
  return want;
}

}  // namespace vkg
