// The one-input elementwise ops (unary.vec4, unary.scalar on
// shaders/elementwise/unary.comp): the op table with each op's domain, Clip's
// bounds and the integer ranges its results saturate to.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/tactics/elementwise_common.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::elementwise_tactics {

namespace {

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

}  // namespace

std::vector<std::string> unary_op_names() {
  std::vector<std::string> names;
  for (const UnaryOp& op : kUnaryOps) names.emplace_back(op.name);
  return names;
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

}  // namespace vkg::elementwise_tactics
