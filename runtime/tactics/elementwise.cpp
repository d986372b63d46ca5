// Vulkan tactics of the elementwise family (see runtime/engine/tactic.h):
// one-input ops, two-input ops with numpy broadcasting (and the variadic
// Sum/Mean/Max/Min as a chain of them), Where, Cast/CastLike and
// BatchNormalization at inference. Each kind has a scalar tactic (one element
// per invocation, any broadcast) and a vec4 one (four contiguous output
// elements per invocation), both from one shader in shaders/elementwise/ whose
// op is a specialization constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/quantization.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/tactic.h"

namespace vkg {

namespace {

constexpr uint32_t kWorkgroupSize = 64;

// Scalar: one element per invocation. Vec4: four contiguous output elements.
enum class Blocking { Scalar, Vec4 };

// How an int32 device value stands for an ONNX integer or bool type
// (shaders/elementwise/math.glsl: KIND_*).
enum class IntKind : uint32_t { I32 = 0, I8 = 1, I16 = 2, U8 = 3, U16 = 4, U32 = 5, Bool = 6 };

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

bool is_int(const LayerTensor& t) { return t.storage == StorageType::I32; }

uint32_t float_bits(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Checks every elementwise tactic makes: the device can hold every tensor, an
// fp16 arithmetic has float tensors to compute on, and the element count fits
// the shaders' 32-bit indices.
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
Broadcast merge_broadcast(const Shape& out, const std::vector<Shape>& inputs, size_t apart = 0) {
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

// Whether the vec4 shaders can run a broadcast: rows of a multiple of 4
// elements, or one row (whose n % 4 tail the shaders take element by element).
bool vec4_serves(const Broadcast& b, std::string& why_not) {
  if (b.dims.size() == 1 || b.dims.back() % 4 == 0) return true;
  why_not = "the innermost broadcast dimension (" + std::to_string(b.dims.back()) + ") is not a multiple of 4";
  return false;
}

// The broadcast words of a push-constant block: rank, dims[max_rank], then per
// input strides[max_rank] (unused entries 0).
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

// How a shader indexes one broadcast input (shaders/elementwise/binary.comp,
// where.comp: LAYOUT_*): the general strided form, or the two forms lavapipe
// can load without gathers.
uint32_t input_layout(const Shape& input, uint32_t n) {
  const int64_t size = num_elements(input);
  if (size == int64_t(n)) return 1;  // identity: the output's elements
  if (size == 1) return 2;           // a single element
  return 0;                          // strided
}

// binary.comp's layout of input `i` of `b`: input_layout, with a strided input told apart by its
// last merged stride (rows: 1, one value per row: 0), so that its loads need no runtime choice.
uint32_t binary_layout(const Shape& input, const Broadcast& b, size_t i) {
  const uint32_t layout = input_layout(input, b.n);
  if (layout != 0) return layout;
  const uint32_t last = b.strides[i].back();
  return last == 1 ? 3 : last == 0 ? 4 : 0;
}

constexpr uint32_t kLayoutUpsample = 5;  // binary.comp's LAYOUT_UPSAMPLE
constexpr uint32_t kLayoutAsA = 6;       // binary.comp's LAYOUT_AS_A (a chained operand only; B: + 1)

// Whether `small` upsampled by the factors of its last two axes is `out`.
bool upsamples_to(const Shape& small, const Shape& out, const UpsampledOperand& up) {
  const size_t r = out.size();
  bool fits = r >= 2 && small.size() == r && small[r - 2] * up.factor_h == out[r - 2] &&
              small[r - 1] * up.factor_w == out[r - 1];
  for (size_t d = 0; fits && d + 2 < r; ++d) fits = small[d] == out[d];
  return fits;
}

// The broadcast of a binary op whose operand `up.input` (`small`) is read through a nearest
// upsampling of its last two axes (graph_optimizer.h), the other operand having the output's
// shape: dimensions [outer, H, W] of the output, the small operand's strides per dimension.
std::optional<Broadcast> upsample_broadcast(const Shape& out, const Shape& small, const Shape& other,
                                            const UpsampledOperand& up, std::string& why_not) {
  const size_t r = out.size();
  if (other != out || !upsamples_to(small, out, up)) {
    why_not = "the upsampled operand " + shape_to_string(small) + " times its factors is not the output " +
              shape_to_string(out) + ", or the other operand is not of the output's shape";
    return std::nullopt;
  }
  const int64_t outer = num_elements(out) / std::max<int64_t>(1, out[r - 2] * out[r - 1]);
  Broadcast b;
  b.n = uint32_t(num_elements(out));
  b.dims = {uint32_t(outer), uint32_t(out[r - 2]), uint32_t(out[r - 1])};
  const std::vector<uint32_t> small_strides = {uint32_t(small[r - 2] * small[r - 1]), uint32_t(small[r - 1]), 1};
  const std::vector<uint32_t> out_strides = {uint32_t(out[r - 2] * out[r - 1]), uint32_t(out[r - 1]), 1};
  b.strides = up.input == 0 ? std::vector{small_strides, out_strides} : std::vector{out_strides, small_strides};
  return b;
}

// The broadcast of a binary op with an upsampled chained operand (graph_optimizer.h) of shape
// `small`: A and B merged over the output's axes before the last two, then H and W on their own
// (binary.comp reads the operand at [outer, h / factor_h, w / factor_w], outer the linear index
// over the axes before).
std::optional<Broadcast> outer_hw_broadcast(const Shape& out, const std::vector<Shape>& inputs, const Shape& small,
                                            const UpsampledOperand& up, std::string& why_not) {
  if (!upsamples_to(small, out, up)) {
    why_not = "the upsampled operand " + shape_to_string(small) + " times its factors is not the output " +
              shape_to_string(out);
    return std::nullopt;
  }
  return merge_broadcast(out, inputs, 2);
}

uint64_t invocations(uint64_t n, Blocking blocking) { return blocking == Blocking::Vec4 ? n / 4 + n % 4 : n; }

// One dispatch of `shader` with specialization constants 1.. from `spec`
// (constant 0 is the workgroup size), covering `count` invocations.
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

// ---------------------------------------------------------------- one input

// The input types an op accepts.
enum class Domain {
  Float,      // float types only
  Numeric,    // floats and integers
  Signed,     // floats and signed integers
  Bool,       // bool only
  Integer,    // integers only
  Predicate,  // float types, bool output
};

// shaders/elementwise/unary.comp: OP_*.
struct UnaryOp {
  const char* name;
  uint32_t code;
  Domain domain;
};

constexpr UnaryOp kUnaryOps[] = {
    {"Abs", 0, Domain::Numeric},      {"Acos", 1, Domain::Float},
    {"Acosh", 2, Domain::Float},      {"Asin", 3, Domain::Float},
    {"Asinh", 4, Domain::Float},      {"Atan", 5, Domain::Float},
    {"Atanh", 6, Domain::Float},      {"Ceil", 7, Domain::Float},
    {"Cos", 8, Domain::Float},        {"Cosh", 9, Domain::Float},
    {"Erf", 10, Domain::Float},       {"Exp", 11, Domain::Float},
    {"Floor", 12, Domain::Float},     {"Log", 13, Domain::Float},
    {"Neg", 14, Domain::Signed},      {"Reciprocal", 15, Domain::Float},
    {"Round", 16, Domain::Float},     {"Sign", 17, Domain::Numeric},
    {"Sin", 18, Domain::Float},       {"Sinh", 19, Domain::Float},
    {"Sqrt", 20, Domain::Float},      {"Tan", 21, Domain::Float},
    {"Tanh", 22, Domain::Float},      {"Relu", 23, Domain::Numeric},
    {"Sigmoid", 24, Domain::Float},   {"Softplus", 25, Domain::Float},
    {"Softsign", 26, Domain::Float},  {"Elu", 27, Domain::Float},
    {"Celu", 28, Domain::Float},      {"Selu", 29, Domain::Float},
    {"LeakyRelu", 30, Domain::Float}, {"HardSigmoid", 31, Domain::Float},
    {"HardSwish", 32, Domain::Float}, {"ThresholdedRelu", 33, Domain::Float},
    {"Shrink", 34, Domain::Numeric},  {"Clip", 35, Domain::Numeric},
    {"IsNaN", 36, Domain::Predicate}, {"IsInf", 37, Domain::Predicate},
    {"Not", 38, Domain::Bool},        {"Mish", 39, Domain::Float},
    {"Gelu", 40, Domain::Float},      {"BitwiseNot", 41, Domain::Integer},
};

// Gelu's `approximate`: "none" (the erf form) or "tanh".
bool gelu_uses_tanh(const Node& node) {
  const std::string approximate = node.attr_string("approximate", "none");
  VKG_CHECK(approximate == "none" || approximate == "tanh",
            node.describe() << ": approximate must be 'none' or 'tanh', got '" << approximate << "'");
  return approximate == "tanh";
}

const UnaryOp& find_unary_op(const std::string& name) {
  for (const UnaryOp& op : kUnaryOps)
    if (name == op.name) return op;
  VKG_THROW("elementwise tactics: '" << name << "' is not a one-input op");
}

std::vector<std::string> unary_op_names() {
  std::vector<std::string> names;
  for (const UnaryOp& op : kUnaryOps) names.emplace_back(op.name);
  return names;
}

bool domain_accepts(Domain domain, DType d) {
  switch (domain) {
    case Domain::Float:
    case Domain::Predicate:
      return is_floating(d);
    case Domain::Numeric:
      return d != DType::Bool;
    case Domain::Signed:
      return is_floating(d) || d == DType::Int8 || d == DType::Int16 || d == DType::Int32 || d == DType::Int64;
    case Domain::Bool:
      return d == DType::Bool;
    case Domain::Integer:
      return is_integer(d);
  }
  return false;
}

// The range of integer type `d` as the device holds it (int32 storage).
std::pair<double, double> int_range(DType d) {
  switch (d) {
    case DType::Int8:
      return {-128, 127};
    case DType::Int16:
      return {-32768, 32767};
    case DType::UInt8:
      return {0, 255};
    case DType::UInt16:
      return {0, 65535};
    case DType::UInt32:
      return {0, 4294967295.0};
    case DType::UInt64:
      return {0, std::numeric_limits<int32_t>::max()};
    case DType::Int32:
    case DType::Int64:
    case DType::Bool:
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
      break;
  }
  return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
}

// The int32 device value of `v` converted to integer type `d` the way the
// reference converts a double (truncating, saturating, NaN -> 0).
int32_t int_value_from_double(double v, DType d) {
  if (std::isnan(v)) return 0;
  const auto [lo, hi] = int_range(d);
  v = std::trunc(std::clamp(v, lo, hi));
  return d == DType::UInt32 ? int32_t(uint32_t(v)) : int32_t(v);
}

// An integer constant (Clip's bounds) as the int32 device value of type `d`.
int32_t int_value(int64_t v, DType d) {
  if (d == DType::UInt32) return int32_t(uint32_t(v));
  return int32_t(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}

// Clip's bounds as push-constant words: float bits, or int32 values for integers.
bool clip_bounds(const LayerContext& ctx, uint32_t& lo_word, uint32_t& hi_word, std::string& why_not) {
  const DType dt = ctx.input(0).dtype;
  const bool integer = !is_floating(dt);
  lo_word = integer ? uint32_t(dt == DType::UInt32 ? 0 : std::numeric_limits<int32_t>::min())
                    : float_bits(std::numeric_limits<float>::lowest());
  hi_word = integer ? uint32_t(dt == DType::UInt32 ? -1 : std::numeric_limits<int32_t>::max())
                    : float_bits(std::numeric_limits<float>::max());
  auto from_double = [&](double v) { return integer ? uint32_t(int_value_from_double(v, dt)) : float_bits(float(v)); };
  if (ctx.opset < 11) {
    if (ctx.node.has_attr("min")) lo_word = from_double(ctx.node.attr_float("min", 0.0f));
    if (ctx.node.has_attr("max")) hi_word = from_double(ctx.node.attr_float("max", 0.0f));
    return true;
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const LayerTensor& bound = ctx.input(i);
    if (!bound.is_constant()) {
      why_not =
          "Clip's " + std::string(i == 1 ? "min" : "max") + " ('" + bound.name + "') is not a build-time constant";
      return false;
    }
    VKG_CHECK(bound.constant->size() == 1, ctx.node.describe() << ": input " << i << " must be a scalar, got shape "
                                                               << shape_to_string(bound.constant->shape()));
    const uint32_t word = integer ? uint32_t(int_value(bound.constant->to_int64s()[0], dt))
                                  : float_bits(float(bound.constant->get_as_double(0)));
    (i == 1 ? lo_word : hi_word) = word;
  }
  return true;
}

std::optional<LayerPlan> plan_unary(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const UnaryOp& op = find_unary_op(ctx.node.op_type);
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!domain_accepts(op.domain, x.dtype)) {
    why_not = ctx.node.op_type + " does not take " + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  const Node& node = ctx.node;
  std::vector<uint32_t> p(4, 0);
  const std::string& name = node.op_type;
  if (name == "Elu" || name == "Celu" || name == "ThresholdedRelu") {
    p[0] = float_bits(node.attr_float("alpha", 1.0f));
    VKG_CHECK(name != "Celu" || node.attr_float("alpha", 1.0f) != 0.0f, node.describe() << ": alpha must not be 0");
  } else if (name == "Selu") {
    p[0] = float_bits(node.attr_float("alpha", 1.67326319217681884765625f));
    p[1] = float_bits(node.attr_float("gamma", 1.05070102214813232421875f));
  } else if (name == "LeakyRelu") {
    p[0] = float_bits(node.attr_float("alpha", 0.01f));
  } else if (name == "HardSigmoid") {
    p[0] = float_bits(node.attr_float("alpha", 0.2f));
    p[1] = float_bits(node.attr_float("beta", 0.5f));
  } else if (name == "Shrink") {
    p[0] = float_bits(node.attr_float("lambd", 0.5f));
    p[1] = float_bits(node.attr_float("bias", 0.0f));
  } else if (name == "Clip") {
    if (!clip_bounds(ctx, p[0], p[1], why_not)) return std::nullopt;
  } else if (name == "Gelu") {
    p[0] = gelu_uses_tanh(node) ? 1 : 0;
  } else if (name == "IsInf") {
    p[0] = node.attr_int("detect_negative", 1) != 0 ? 1 : 0;
    p[1] = node.attr_int("detect_positive", 1) != 0 ? 1 : 0;
  }
  const bool int_math = is_int(x) && is_int(y) && name != "Shrink";
  const uint32_t n = uint32_t(y.size());
  LayerPlan plan;
  const BindingRef in = bind_input(ctx, plan, 0);
  std::vector<uint32_t> push = {n};
  push.insert(push.end(), p.begin(), p.end());
  plan.dispatches.push_back(
      make_dispatch(ctx, "elementwise/unary",
                    {blocking == Blocking::Vec4 ? 4u : 1u, op.code, is_int(x), is_int(y), int_math, int_kind(x.dtype)},
                    {in, BindingRef::output(0)}, push, invocations(n, blocking)));
  return plan;
}

// ---------------------------------------------------------------- two inputs

// shaders/elementwise/binary.comp: OP_*.
enum BinaryCode : uint32_t {
  kAdd = 0,
  kSub = 1,
  kMul = 2,
  kDiv = 3,
  kPow = 4,
  kMod = 5,
  kFmod = 6,
  kMax = 7,
  kMin = 8,
  kMean = 9,
  kFirst = 10,
  kPRelu = 11,
  kShl = 12,
  kShr = 13,
  kEqual = 14,
  kLess = 15,
  kLessEqual = 16,
  kGreater = 17,
  kGreaterEqual = 18,
  kAnd = 19,
  kOr = 20,
  kXor = 21,
  kBitwiseAnd = 22,
  kBitwiseOr = 23,
  kBitwiseXor = 24,
};

// Which input types a two-input op takes.
enum class BinaryTypes {
  Numeric,   // equal types, not bool
  Any,       // equal types (Equal)
  Bool,      // bool (And, Or, Xor)
  Unsigned,  // equal unsigned integer types (BitShift)
  Integer,   // equal integer types (the bitwise ops)
  Pow,       // a numeric base and a numeric exponent of any type
};

// An op's shader code: Mod's fmod attribute turns kMod into kFmod, BitShift's
// direction kShl into kShr, and Mean's last step is kMean.
struct BinaryOp {
  const char* name;
  uint32_t code;
  BinaryTypes types;
  bool variadic = false;  // Sum, Mean, Max, Min: any number of inputs, folded
};

constexpr BinaryOp kBinaryOps[] = {
    {"Add", kAdd, BinaryTypes::Numeric},
    {"Sub", kSub, BinaryTypes::Numeric},
    {"Mul", kMul, BinaryTypes::Numeric},
    {"Div", kDiv, BinaryTypes::Numeric},
    {"Pow", kPow, BinaryTypes::Pow},
    {"Mod", kMod, BinaryTypes::Numeric},
    {"Max", kMax, BinaryTypes::Numeric, true},
    {"Min", kMin, BinaryTypes::Numeric, true},
    {"Sum", kAdd, BinaryTypes::Numeric, true},
    {"Mean", kAdd, BinaryTypes::Numeric, true},
    {"PRelu", kPRelu, BinaryTypes::Numeric},
    {"BitShift", kShl, BinaryTypes::Unsigned},
    {"Equal", kEqual, BinaryTypes::Any},
    {"Less", kLess, BinaryTypes::Numeric},
    {"LessOrEqual", kLessEqual, BinaryTypes::Numeric},
    {"Greater", kGreater, BinaryTypes::Numeric},
    {"GreaterOrEqual", kGreaterEqual, BinaryTypes::Numeric},
    {"And", kAnd, BinaryTypes::Bool},
    {"Or", kOr, BinaryTypes::Bool},
    {"Xor", kXor, BinaryTypes::Bool},
    {"BitwiseAnd", kBitwiseAnd, BinaryTypes::Integer},
    {"BitwiseOr", kBitwiseOr, BinaryTypes::Integer},
    {"BitwiseXor", kBitwiseXor, BinaryTypes::Integer},
};

const BinaryOp& find_binary_op(const std::string& name) {
  for (const BinaryOp& op : kBinaryOps)
    if (name == op.name) return op;
  VKG_THROW("elementwise tactics: '" << name << "' is not a two-input op");
}

std::vector<std::string> binary_op_names() {
  std::vector<std::string> names;
  for (const BinaryOp& op : kBinaryOps) names.emplace_back(op.name);
  return names;
}

bool is_unsigned_int(DType d) {
  return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
}

bool binary_types_ok(const LayerContext& ctx, BinaryTypes types, std::string& why_not) {
  const DType a = ctx.input(0).dtype;
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    const DType b = ctx.input(i).dtype;
    if (types != BinaryTypes::Pow && b != a) {
      why_not = std::string("inputs of types ") + dtype_name(a) + " and " + dtype_name(b);
      return false;
    }
    if (types == BinaryTypes::Pow && b == DType::Bool) {
      why_not = "a bool exponent";
      return false;
    }
  }
  bool ok = true;
  switch (types) {
    case BinaryTypes::Numeric:
    case BinaryTypes::Pow:
      ok = a != DType::Bool;
      break;
    case BinaryTypes::Any:
      ok = true;
      break;
    case BinaryTypes::Bool:
      ok = a == DType::Bool;
      break;
    case BinaryTypes::Unsigned:
      ok = is_unsigned_int(a);
      break;
    case BinaryTypes::Integer:
      ok = is_integer(a);
      break;
  }
  if (!ok) why_not = ctx.node.op_type + " does not take " + dtype_name(a) + " inputs";
  return ok;
}

// The shape input 1 broadcasts with: before opset 7, broadcasting needs the
// attribute broadcast=1 (aligned at `axis`, else at the trailing dimensions).
Shape binary_b_shape(const LayerContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  Shape b = ctx.input(1).shape;
  if (ctx.opset >= 7) return b;
  if (ctx.node.attr_int("broadcast", 0) == 0) {
    VKG_CHECK(a == b, ctx.node.describe()
                          << ": input shapes " << shape_to_string(a) << " and " << shape_to_string(b)
                          << " differ and the node does not set broadcast=1 (opset " << ctx.opset << ")");
  } else if (ctx.node.has_attr("axis")) {
    const int64_t rank = int64_t(a.size());
    int64_t axis = ctx.node.attr_int("axis");
    if (axis < 0) axis += rank;
    VKG_CHECK(axis >= 0 && axis + int64_t(b.size()) <= rank,
              ctx.node.describe() << ": cannot broadcast " << shape_to_string(b) << " onto " << shape_to_string(a)
                                  << " at axis " << ctx.node.attr_int("axis"));
    b.insert(b.end(), size_t(rank - axis - int64_t(b.size())), 1);
  }
  return b;
}

// PRelu's slope shape: before opset 7 a 1-D slope holds one value per channel.
Shape prelu_slope_shape(const LayerContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  Shape s = ctx.input(1).shape;
  if (ctx.opset < 7 && s.size() == 1 && x.size() >= 2 && s[0] == x[1] && s[0] != 1) s.insert(s.end(), x.size() - 2, 1);
  return s;
}

// One step C = op(A, B) of a binary plan.
struct BinaryStep {
  uint32_t code = kAdd;
  BindingRef a, b;
  const LayerTensor* a_tensor = nullptr;  // types of A and B
  const LayerTensor* b_tensor = nullptr;
  Shape a_shape, b_shape;  // as broadcast to the output
};

std::optional<LayerPlan> plan_binary(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const std::string& name = node.op_type;
  const BinaryOp& op = find_binary_op(name);
  const bool variadic = op.variadic;
  size_t num_inputs = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) {
      why_not = "input " + std::to_string(i) + " is omitted";
      return std::nullopt;
    }
    ++num_inputs;
  }
  // A fused elementwise chain (graph_optimizer.h): the chained ops' operands are inputs 2 and 3.
  const std::vector<ChainedOp> chain = chained_ops(node);
  const size_t operands = 2 + chain.size();
  VKG_CHECK(num_inputs >= 1 && (variadic || num_inputs == operands),
            node.describe() << ": expects " << (variadic ? "at least 1 input" : std::to_string(operands) + " inputs")
                            << ", got " << num_inputs);
  VKG_CHECK(chain.empty() || !variadic, node.describe() << ": a variadic op cannot carry a chained op");
  // A fused nearest upsampling of one operand (graph_optimizer.h).
  const std::optional<UpsampledOperand> up = upsampled_operand(node);
  VKG_CHECK(!up || !variadic, node.describe() << ": a variadic op cannot read an upsampled operand");
  VKG_CHECK(!up || up->input < operands,
            node.describe() << ": its upsampled operand (input " << up->input << ") is not one of its inputs");
  if (!binary_types_ok(ctx, op.types, why_not)) return std::nullopt;

  const LayerTensor& out = ctx.output(0);
  LayerPlan plan;
  std::vector<BinaryStep> steps;
  if (variadic) {
    const BindingRef first = bind_input(ctx, plan, 0);
    if (num_inputs == 1) {
      steps.push_back({kFirst, first, first, &ctx.input(0), &ctx.input(0), ctx.input(0).shape, ctx.input(0).shape});
    }
    for (size_t i = 1; i < num_inputs; ++i) {
      BinaryStep s;
      s.code = (name == "Mean" && i + 1 == num_inputs) ? uint32_t(kMean) : op.code;
      s.a = i == 1 ? first : BindingRef::output(0);
      s.a_tensor = i == 1 ? &ctx.input(0) : &out;
      s.a_shape = i == 1 ? ctx.input(0).shape : out.shape;
      s.b = bind_input(ctx, plan, i);
      s.b_tensor = &ctx.input(i);
      s.b_shape = ctx.input(i).shape;
      steps.push_back(s);
    }
  } else {
    BinaryStep s;
    s.code = op.code;
    s.a_tensor = &ctx.input(0);
    s.b_tensor = &ctx.input(1);
    s.a_shape = ctx.input(0).shape;
    s.b_shape = name == "PRelu" ? prelu_slope_shape(ctx) : binary_b_shape(ctx);
    if (name == "Mod") {
      const bool fmod = node.attr_int("fmod", 0) != 0;
      VKG_CHECK(fmod || !is_floating(s.a_tensor->dtype),
                node.describe() << ": fmod must be 1 for " << dtype_name(s.a_tensor->dtype) << " inputs");
      s.code = fmod ? kFmod : kMod;
    } else if (name == "BitShift") {
      const std::string direction = node.attr_string("direction", "");
      VKG_CHECK(direction == "LEFT" || direction == "RIGHT",
                node.describe() << ": attribute direction must be \"LEFT\" or \"RIGHT\", got \"" << direction << "\"");
      s.code = direction == "LEFT" ? kShl : kShr;
    }
    s.a = bind_input(ctx, plan, 0);
    s.b = bind_input(ctx, plan, 1);
    steps.push_back(s);
  }

  for (const BinaryStep& s : steps) {
    std::optional<Broadcast> b;
    uint32_t a_layout = 0, b_layout = 0;
    if (up && (is_int(*s.a_tensor) || is_int(*s.b_tensor))) {
      why_not = "an upsampled operand needs float operands";
      return std::nullopt;
    }
    if (up && up->input >= 2) {
      // An upsampled chained operand: the output as [outer, H, W], A and B strided over it.
      b = outer_hw_broadcast(out.shape, {s.a_shape, s.b_shape}, ctx.input(up->input).shape, *up, why_not);
      if (!b) return std::nullopt;
      a_layout = binary_layout(s.a_shape, *b, 0);
      b_layout = binary_layout(s.b_shape, *b, 1);
    } else if (up) {
      b = upsample_broadcast(out.shape, up->input == 0 ? s.a_shape : s.b_shape, up->input == 0 ? s.b_shape : s.a_shape,
                             *up, why_not);
      if (!b) return std::nullopt;
      a_layout = up->input == 0 ? kLayoutUpsample : 1;
      b_layout = up->input == 1 ? kLayoutUpsample : 1;
    } else {
      b = merge_broadcast(out.shape, {s.a_shape, s.b_shape});
      a_layout = binary_layout(s.a_shape, *b, 0);
      b_layout = binary_layout(s.b_shape, *b, 1);
    }
    if (blocking == Blocking::Vec4 && !vec4_serves(*b, why_not)) return std::nullopt;
    std::vector<uint32_t> push = {b->n, uint32_t(b->dims.size()), uint32_t(num_inputs)};
    if (!push_broadcast(*b, 8, push, why_not)) return std::nullopt;
    const bool a_int = is_int(*s.a_tensor), b_int = is_int(*s.b_tensor), out_int = is_int(out);
    const bool int_math = a_int && b_int;
    if (a_int && !b_int && ctx.arith != Arith::F32) {
      why_not = "an integer base with a float exponent needs fp32 arithmetic (the f32 variant)";
      return std::nullopt;
    }
    const uint32_t kind = int_kind(int_math ? s.a_tensor->dtype : out.dtype);
    // Bindings 3 and 4 are the chained operands, or (unused) A again; per chained op its mode,
    // op code and layout (specialization constants 10-12 and 16-18).
    std::array<BindingRef, 2> chained = {s.a, s.a};
    std::array<uint32_t, 6> chain_spec = {0, 0, 1, 0, 0, 1};
    uint64_t largest = uint64_t(std::max(s.a_tensor->size(), s.b_tensor->size()));
    for (size_t k = 0; k < chain.size(); ++k) {
      const LayerTensor& operand = ctx.input(2 + k);
      const bool upsampled = up && up->input == 2 + k;
      uint32_t layout = upsampled ? kLayoutUpsample : input_layout(operand.shape, b->n);
      // An operand that is A or B again (the x of x * g + x, a gate's residual): read once.
      for (uint32_t ab = 0; ab < 2 && layout == 1; ++ab) {
        if (operand.name == ctx.input(ab).name && (ab == 0 ? a_layout : b_layout) == 1) layout = kLayoutAsA + ab;
      }
      if (out_int || int_math || is_int(operand) || layout == 0) {
        why_not = "a chained op needs float operands of the output's shape or one element (or an upsampled one)";
        return std::nullopt;
      }
      chained[k] = bind_input(ctx, plan, 2 + k);
      chain_spec[3 * k] = chain[k].operand_first ? 2 : 1;
      chain_spec[3 * k + 1] = find_binary_op(chain[k].op).code;
      chain_spec[3 * k + 2] = layout;
      largest = std::max(largest, uint64_t(operand.size()));
    }
    // Float operands go through texel buffers where the device has them (not the output of an
    // earlier step, which this dispatch writes).
    const bool texel = blocking == Blocking::Vec4 && !a_int && !b_int && s.a.kind != BindingRef::Kind::Output &&
                       ctx.texel_reads(largest, /*wide_stores=*/true);
    // Eight elements per invocation, stored at once, where rows hold whole eights.
    const bool vec8 = texel && !out_int && b->n % 8 == 0 && (b->dims.size() == 1 || b->dims.back() % 8 == 0);
    const uint32_t vec = vec8 ? 8u : blocking == Blocking::Vec4 ? 4u : 1u;
    plan.dispatches.push_back(
        make_dispatch(ctx, texel ? "elementwise/binary_texel" : "elementwise/binary",
                      {vec, s.code, a_int, b_int, out_int, int_math, kind, a_layout, b_layout, chain_spec[0],
                       chain_spec[1], chain_spec[2], uint32_t(b->dims.size()), up ? uint32_t(up->factor_h) : 1u,
                       up ? uint32_t(up->factor_w) : 1u, chain_spec[3], chain_spec[4], chain_spec[5]},
                      {s.a, s.b, BindingRef::output(0), chained[0], chained[1]}, push,
                      vec8 ? b->n / 8 : invocations(b->n, blocking)));
    plan.dispatches.back().spec.push_back(small_indices_spec(b->n));
  }
  return plan;
}

// ---------------------------------------------------------------- Where

std::optional<LayerPlan> plan_where(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  VKG_CHECK(ctx.has_input(0) && ctx.has_input(1) && ctx.has_input(2), ctx.node.describe() << ": expects 3 inputs");
  const LayerTensor& cond = ctx.input(0);
  const LayerTensor& x = ctx.input(1);
  const LayerTensor& y = ctx.input(2);
  const LayerTensor& out = ctx.output(0);
  if (cond.dtype != DType::Bool || x.dtype != y.dtype) {
    why_not = "expects a bool condition and two values of one type";
    return std::nullopt;
  }
  if (ctx.arith != Arith::F32 && is_int(x)) {
    why_not = "the f16 variant moves float16 values; the f32 variant moves 32-bit ones";
    return std::nullopt;
  }
  const Broadcast b = merge_broadcast(out.shape, {cond.shape, x.shape, y.shape});
  if (blocking == Blocking::Vec4 && !vec4_serves(b, why_not)) return std::nullopt;
  std::vector<uint32_t> push = {b.n, uint32_t(b.dims.size())};
  if (!push_broadcast(b, 7, push, why_not)) return std::nullopt;
  LayerPlan plan;
  std::vector<BindingRef> bindings;
  for (size_t i = 0; i < 3; ++i) bindings.push_back(bind_input(ctx, plan, i));
  bindings.push_back(BindingRef::output(0));
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/where",
                                          {blocking == Blocking::Vec4 ? 4u : 1u, input_layout(cond.shape, b.n),
                                           input_layout(x.shape, b.n), input_layout(y.shape, b.n)},
                                          bindings, push, invocations(b.n, blocking)));
  return plan;
}

// ---------------------------------------------------------------- Cast

// shaders/elementwise/cast.comp: FROM_* and TO_*.
enum CastFrom : uint32_t { kFromFloat = 0, kFromInt = 1 };
enum CastTo : uint32_t { kToFloat = 0, kToFloat16 = 1, kToBFloat16 = 2, kToInt = 3, kToBool = 4 };

std::optional<LayerPlan> plan_cast(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);  // its dtype is the target type (Cast's `to`, CastLike's input 1)
  uint32_t to = kToFloat;
  switch (y.dtype) {
    case DType::Float32:
      to = kToFloat;
      break;
    case DType::Float16:
      to = ctx.precision == Precision::FP32 ? kToFloat16 : kToFloat;
      break;
    case DType::BFloat16:
      to = kToBFloat16;
      break;
    case DType::Bool:
      to = kToBool;
      break;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
      to = kToInt;
      break;
    case DType::Float64:
      why_not = "float64 is not supported on Vulkan";
      return std::nullopt;
  }
  const uint32_t from = is_int(x) ? kFromInt : kFromFloat;
  const uint32_t kind = int_kind(to == kToInt ? y.dtype : x.dtype);
  const uint32_t n = uint32_t(y.size());
  LayerPlan plan;
  const BindingRef in = bind_input(ctx, plan, 0);
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/cast",
                                          {blocking == Blocking::Vec4 ? 4u : 1u, from, to, kind},
                                          {in, BindingRef::output(0)}, {n}, invocations(n, blocking)));
  return plan;
}

// ---------------------------------------------------------------- BatchNormalization

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

// ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear

// shaders/elementwise/quantize.comp: MODE_* and ROUND_*.
enum QuantizeMode : uint32_t { kQuantize = 0, kDequantize = 1 };

// One dispatch of quantize.comp; the scale and zero point are bound like any input (a
// build-time constant becomes a weight).
std::optional<LayerPlan> plan_quantize(const LayerContext& ctx, std::string& why_not) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const bool quantize = node.op_type == "QuantizeLinear";
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& scale = ctx.input(1);
  const LayerTensor& y = ctx.output(0);
  const bool has_zero = ctx.has_input(2);
  VKG_CHECK(is_floating(scale.dtype) && scale.dtype != DType::Float64,
            node.describe() << ": the scale has type " << dtype_name(scale.dtype)
                            << ", expected float32, float16 or bfloat16");
  const DType quantized = quantize ? y.dtype : x.dtype;
  if (!quant::is_quantized_type(quantized, ctx.opset, !quantize) || (quantize && !is_int(x) && !is_floating(x.dtype))) {
    why_not = std::string(quantize ? "quantizing to " : "dequantizing ") + dtype_name(quantized) + " is not supported";
    return std::nullopt;
  }
  if (quantize && ctx.opset >= 21)
    (void)quant::quantized_type(node, ctx.opset, has_zero ? std::optional(ctx.input(2).dtype) : std::nullopt);
  if (has_zero) quant::check_zero_point(node, scale.shape, ctx.input(2).shape, ctx.input(2).dtype, quantized);
  const quant::Layout l = quant::layout(node, ctx.opset, x.shape, scale.shape);
  uint32_t round = 0;
  if (!quantize && ctx.precision == Precision::FP32)
    round = y.dtype == DType::Float16 ? 1u : y.dtype == DType::BFloat16 ? 2u : 0u;
  const auto range = quant::range(quantized);
  const uint32_t n = uint32_t(x.size());
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0);
  const BindingRef sb = bind_input(ctx, plan, 1);
  const BindingRef zb = has_zero ? bind_input(ctx, plan, 2) : sb;
  const auto word = [](int64_t v) { return uint32_t(std::max<int64_t>(v, 1)); };
  plan.dispatches.push_back(make_dispatch(
      ctx, "elementwise/quantize", {quantize ? kQuantize : kDequantize, is_int(x) ? 1u : 0u, has_zero ? 1u : 0u, round},
      {xb, sb, zb, BindingRef::output(0)},
      {n, word(l.axis_dim), word(l.inner), word(l.block), uint32_t(l.stride_outer), uint32_t(l.stride_axis),
       uint32_t(l.stride_inner), uint32_t(int32_t(range.first)), uint32_t(int32_t(range.second))},
      n));
  return plan;
}

// DynamicQuantizeLinear: a one-workgroup dispatch for the scale and zero point, then one
// invocation per element (shaders/elementwise/dynamic_quantize.comp).
std::optional<LayerPlan> plan_dynamic_quantize(const LayerContext& ctx, std::string& why_not) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  if (x.dtype != DType::Float32) {
    why_not = std::string("x has type ") + dtype_name(x.dtype) + ", expected float32";
    return std::nullopt;
  }
  const uint32_t n = uint32_t(x.size());
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0);
  std::vector<BindingRef> outs;
  for (uint32_t i = 0; i < 3; ++i) {
    if (i < ctx.outputs.size() && ctx.outputs[i].present()) {
      outs.push_back(BindingRef::output(i));
    } else {
      plan.scratch_bytes.push_back(std::max<uint64_t>(16, i == 0 ? uint64_t(n) * 4 : 4));
      outs.push_back(BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1)));
    }
  }
  const std::vector<BindingRef> bindings = {xb, outs[0], outs[1], outs[2]};
  Dispatch stats = make_dispatch(ctx, "elementwise/dynamic_quantize", {0}, bindings, {n}, 1);
  stats.spec[0].value = 256;
  stats.groups = {1, 1, 1};
  plan.dispatches.push_back(std::move(stats));
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/dynamic_quantize", {1}, bindings, {n}, n));
  return plan;
}

// A planner of `blocking` for the registry.
template <std::optional<LayerPlan> (*Plan)(const LayerContext&, std::string&, Blocking)>
std::function<std::optional<LayerPlan>(const LayerContext&, std::string&)> with(Blocking blocking) {
  return [blocking](const LayerContext& ctx, std::string& why_not) { return Plan(ctx, why_not, blocking); };
}

}  // namespace

void register_elementwise_tactics(TacticRegistry& r) {
  const auto all = {Arith::F32, Arith::F16, Arith::F16Acc32};
  const auto moves = {Arith::F32, Arith::F16};  // data movement and conversion
  const std::vector<std::string> cast_ops = {"Cast", "CastLike"};
  // vec4 first: faster where it serves; the scalar tactics serve every layer.
  r.add_variants("unary.vec4", unary_op_names(), 10, all, with<plan_unary>(Blocking::Vec4));
  r.add_variants("unary.scalar", unary_op_names(), 20, all, with<plan_unary>(Blocking::Scalar));
  r.add_variants("binary.vec4", binary_op_names(), 10, all, with<plan_binary>(Blocking::Vec4));
  r.add_variants("binary.scalar", binary_op_names(), 20, all, with<plan_binary>(Blocking::Scalar));
  r.add_variants("where.vec4", {"Where"}, 10, moves, with<plan_where>(Blocking::Vec4));
  r.add_variants("where.scalar", {"Where"}, 20, moves, with<plan_where>(Blocking::Scalar));
  r.add_variants("cast.vec4", cast_ops, 10, moves, with<plan_cast>(Blocking::Vec4));
  r.add_variants("cast.scalar", cast_ops, 20, moves, with<plan_cast>(Blocking::Scalar));
  r.add_variants("batchnorm.vec4", {"BatchNormalization"}, 10, all, with<plan_batchnorm>(Blocking::Vec4));
  r.add_variants("batchnorm.scalar", {"BatchNormalization"}, 20, all, with<plan_batchnorm>(Blocking::Scalar));
  r.add_variants("quantize.scalar", {"QuantizeLinear", "DequantizeLinear"}, 20, {Arith::F32}, plan_quantize);
  r.add_variants("dynamic_quantize.two_pass", {"DynamicQuantizeLinear"}, 20, {Arith::F32}, plan_dynamic_quantize);
}

}  // namespace vkg
