// The two-input elementwise ops with numpy broadcasting (binary.vec4,
// binary.scalar on shaders/elementwise/binary.comp), the variadic Sum, Mean,
// Max and Min as a chain of them, and what graph fusion adds to a binary layer:
// chained ops with their operands and a nearest-upsampled operand.
#include <algorithm>
#include <array>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/tactics/elementwise_common.h"

namespace vkg::elementwise_tactics {

namespace {

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

// The number of inputs of a binary layer, every one present (nullopt, why_not filled, when one is
// omitted).
std::optional<size_t> present_inputs(const LayerContext& ctx, std::string& why_not) {
  size_t num_inputs = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) {
      why_not = "input " + std::to_string(i) + " is omitted";
      return std::nullopt;
    }
    ++num_inputs;
  }
  return num_inputs;
}

// The steps of a binary plan, A and B bound in `plan`: a variadic op (Sum, Mean, Max, Min) folds
// its inputs into the output one at a time; any other op is one step, Mod's fmod and BitShift's
// direction resolved into its code.
std::vector<BinaryStep> binary_steps(const LayerContext& ctx, const BinaryOp& op, size_t num_inputs, LayerPlan& plan) {
  const Node& node = ctx.node;
  const std::string& name = node.op_type;
  const LayerTensor& out = ctx.output(0);
  std::vector<BinaryStep> steps;
  if (op.variadic) {
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
  return steps;
}

// How a step's A and B broadcast to the output, and the layouts binary.comp reads them with.
struct StepBroadcast {
  Broadcast b;
  uint32_t a_layout = 0, b_layout = 0;
};

std::optional<StepBroadcast> step_broadcast(const LayerContext& ctx, const BinaryStep& s,
                                            const std::optional<UpsampledOperand>& up, std::string& why_not) {
  const LayerTensor& out = ctx.output(0);
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
  return StepBroadcast{std::move(*b), a_layout, b_layout};
}

// Bindings 3 and 4 of a step: the chained operands, or (unused) A again; per chained op its mode,
// op code and layout (specialization constants 10-12 and 16-18); and the most elements any
// operand has. Nullopt (why_not filled) where a chained operand is not a float of the output's
// shape or one element (or an upsampled one).
struct ChainedOperands {
  std::array<BindingRef, 2> bindings;
  std::array<uint32_t, 6> spec = {0, 0, 1, 0, 0, 1};
  uint64_t largest = 0;
};

std::optional<ChainedOperands> bind_chained(const LayerContext& ctx, LayerPlan& plan, const BinaryStep& s,
                                            const std::vector<ChainedOp>& chain,
                                            const std::optional<UpsampledOperand>& up, const StepBroadcast& sb,
                                            bool int_operands, std::string& why_not) {
  ChainedOperands c;
  c.bindings = {s.a, s.a};
  c.largest = uint64_t(std::max(s.a_tensor->size(), s.b_tensor->size()));
  for (size_t k = 0; k < chain.size(); ++k) {
    const LayerTensor& operand = ctx.input(2 + k);
    const bool upsampled = up && up->input == 2 + k;
    uint32_t layout = upsampled ? kLayoutUpsample : input_layout(operand.shape, sb.b.n);
    // An operand that is A or B again (the x of x * g + x, a gate's residual): read once.
    for (uint32_t ab = 0; ab < 2 && layout == 1; ++ab) {
      if (operand.name == ctx.input(ab).name && (ab == 0 ? sb.a_layout : sb.b_layout) == 1) layout = kLayoutAsA + ab;
    }
    if (int_operands || is_int(operand) || layout == 0) {
      why_not = "a chained op needs float operands of the output's shape or one element (or an upsampled one)";
      return std::nullopt;
    }
    c.bindings[k] = bind_input(ctx, plan, 2 + k);
    c.spec[3 * k] = chain[k].operand_first ? 2 : 1;
    c.spec[3 * k + 1] = find_binary_op(chain[k].op).code;
    c.spec[3 * k + 2] = layout;
    c.largest = std::max(c.largest, uint64_t(operand.size()));
  }
  return c;
}

}  // namespace

std::vector<std::string> binary_op_names() {
  std::vector<std::string> names;
  for (const BinaryOp& op : kBinaryOps) names.emplace_back(op.name);
  return names;
}

std::optional<LayerPlan> plan_binary(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const BinaryOp& op = find_binary_op(node.op_type);
  const bool variadic = op.variadic;
  const std::optional<size_t> present = present_inputs(ctx, why_not);
  if (!present) return std::nullopt;
  const size_t num_inputs = *present;
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
  for (const BinaryStep& s : binary_steps(ctx, op, num_inputs, plan)) {
    const std::optional<StepBroadcast> sb = step_broadcast(ctx, s, up, why_not);
    if (!sb) return std::nullopt;
    const Broadcast& b = sb->b;
    if (blocking == Blocking::Vec4 && !vec4_serves(b, why_not)) return std::nullopt;
    std::vector<uint32_t> push = {b.n, uint32_t(b.dims.size()), uint32_t(num_inputs)};
    if (!push_broadcast(b, 8, push, why_not)) return std::nullopt;
    const bool a_int = is_int(*s.a_tensor), b_int = is_int(*s.b_tensor), out_int = is_int(out);
    const bool int_math = a_int && b_int;
    if (a_int && !b_int && ctx.arith != Arith::F32) {
      why_not = "an integer base with a float exponent needs fp32 arithmetic (the f32 variant)";
      return std::nullopt;
    }
    const uint32_t kind = int_kind(int_math ? s.a_tensor->dtype : out.dtype);
    const std::optional<ChainedOperands> chained =
        bind_chained(ctx, plan, s, chain, up, *sb, out_int || int_math, why_not);
    if (!chained) return std::nullopt;
    const std::array<uint32_t, 6>& chain_spec = chained->spec;
    // Float operands go through texel buffers where the device has them (not the output of an
    // earlier step, which this dispatch writes).
    const bool texel = blocking == Blocking::Vec4 && !a_int && !b_int && s.a.kind != BindingRef::Kind::Output &&
                       ctx.texel_reads(chained->largest, /*wide_stores=*/true);
    // Eight elements per invocation, stored at once, where rows hold whole eights.
    const bool vec8 = texel && !out_int && b.n % 8 == 0 && (b.dims.size() == 1 || b.dims.back() % 8 == 0);
    const uint32_t vec = vec8 ? 8u : blocking == Blocking::Vec4 ? 4u : 1u;
    plan.dispatches.push_back(
        make_dispatch(ctx, texel ? "elementwise/binary_texel" : "elementwise/binary",
                      {vec, s.code, a_int, b_int, out_int, int_math, kind, sb->a_layout, sb->b_layout, chain_spec[0],
                       chain_spec[1], chain_spec[2], uint32_t(b.dims.size()), up ? uint32_t(up->factor_h) : 1u,
                       up ? uint32_t(up->factor_w) : 1u, chain_spec[3], chain_spec[4], chain_spec[5]},
                      {s.a, s.b, BindingRef::output(0), chained->bindings[0], chained->bindings[1]}, push,
                      vec8 ? b.n / 8 : invocations(b.n, blocking)));
    plan.dispatches.back().spec.push_back(small_indices_spec(b.n));
  }
  return plan;
}

}  // namespace vkg::elementwise_tactics
