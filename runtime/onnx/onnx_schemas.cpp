// Op versions newer than the ONNX library vkgraphy builds against. Debian 12's ONNX 1.12
// knows opsets up to 17; for the versions of opsets 18 to 23 that changed an op's form
// (attributes that became inputs, new attributes, new ops), this file registers schemas
// with vkgraphy's own shape rules into ONNX's registry, so that ONNX's checker and shape
// inference (data propagation included) treat them like any other version. Versions that
// only widened the type lists (most of opsets 19, 21, 22 and 23) need nothing: ONNX 1.12's
// latest version of the op has the same form. A version the installed ONNX already has
// is never registered again.
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "runtime/core/resize_sampling.h"
#include "runtime/onnx/onnx_import.h"

namespace onnx {
// ONNX's shared convolution/pooling shape rule (onnx/defs/nn/defs.cc; exported by libonnx,
// not declared in its headers): the output size of each spatial axis from kernel_shape,
// strides, pads or auto_pad, dilations when `use_dilation`, and ceil_mode.
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape, int input1Idx,
                            int input2Idx);
}  // namespace onnx

namespace vkg {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

constexpr const char* kSchemaFile = "vkgraphy:runtime/onnx/onnx_schemas.cpp";

const std::vector<std::string> kFloatTypes = {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};

bool has_input(InferenceContext& ctx, size_t i) { return ctx.getNumInputs() > i && ctx.getInputType(i) != nullptr; }

// The values of a constant integer input; nullopt when it is not known at inference time.
std::optional<std::vector<int64_t>> constant_ints(InferenceContext& ctx, size_t i) {
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (!t) return std::nullopt;
  if (t->data_type() == onnx::TensorProto::INT32) {
    const auto v = onnx::ParseData<int32_t>(t);
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (t->data_type() != onnx::TensorProto::INT64) fail_shape_inference("input ", i, " must be int32 or int64");
  return onnx::ParseData<int64_t>(t);
}

std::optional<std::vector<float>> constant_floats(InferenceContext& ctx, size_t i) {
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (!t || t->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  return onnx::ParseData<float>(t);
}

int64_t normalized_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// Output `out` gets input 0's rank with every dimension unknown.
void unknown_dims_of_input_rank(InferenceContext& ctx, size_t out) {
  auto* shape = onnx::getOutputShape(ctx, out);
  shape->clear_dim();
  for (int d = 0; d < onnx::getInputShape(ctx, 0).dim_size(); ++d) shape->add_dim();
}

// Reduce*-18: the axes are an optional input (ReduceMax/ReduceMin-20 only add bool).
void reduce_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (has_input(ctx, 1)) {
    const auto given = constant_ints(ctx, 1);
    if (!given) {
      if (keepdims) unknown_dims_of_input_rank(ctx, 0);
      return;
    }
    axes = *given;
  }
  if (axes.empty() && onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0) {
    onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
    return;
  }
  std::vector<bool> reduced(size_t(rank), axes.empty());
  for (int64_t a : axes) reduced[size_t(normalized_axis(a, rank))] = true;
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  for (int d = 0; d < rank; ++d) {
    if (!reduced[size_t(d)])
      *out->add_dim() = in.dim(d);
    else if (keepdims)
      out->add_dim()->set_dim_value(1);
  }
}

// Split-18: `num_outputs` (the last part smaller when the axis does not divide) or the
// `split` input.
void split_rule(InferenceContext& ctx) {
  const size_t n = ctx.getNumOutputs();
  for (size_t i = 0; i < n; ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int64_t axis = normalized_axis(onnx::getAttribute(ctx, "axis", 0), in.dim_size());
  const auto& dim = in.dim(int(axis));
  std::optional<std::vector<int64_t>> sizes;
  if (has_input(ctx, 1)) {
    if (ctx.getAttribute("num_outputs")) fail_shape_inference("give either the split input or num_outputs, not both");
    sizes = constant_ints(ctx, 1);
    if (sizes && sizes->size() != n) fail_shape_inference(sizes->size(), " split sizes for ", n, " outputs");
    if (sizes && dim.has_dim_value()) {
      int64_t sum = 0;
      for (int64_t s : *sizes) sum += s;
      if (sum != dim.dim_value()) fail_shape_inference("split sizes add up to ", sum, ", not ", dim.dim_value());
    }
  } else if (dim.has_dim_value()) {
    const int64_t parts = onnx::getAttribute(ctx, "num_outputs", int64_t(n));
    if (parts != int64_t(n) || parts <= 0)
      fail_shape_inference("num_outputs is ", parts, " but the node has ", n, " outputs");
    const int64_t chunk = (dim.dim_value() + parts - 1) / parts;
    sizes.emplace();
    for (int64_t k = 0; k < parts; ++k) sizes->push_back(std::clamp<int64_t>(dim.dim_value() - k * chunk, 0, chunk));
  }
  for (size_t i = 0; i < n; ++i) {
    auto* out = onnx::getOutputShape(ctx, i);
    *out = in;
    out->mutable_dim(int(axis))->clear_dim_param();
    if (sizes)
      out->mutable_dim(int(axis))->set_dim_value((*sizes)[i]);
    else
      out->mutable_dim(int(axis))->clear_dim_value();
  }
}

// Pad-18: pads and the optional axes they apply to are inputs.
void pad_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const auto pads = constant_ints(ctx, 1);
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{};
  if (has_input(ctx, 3)) axes = constant_ints(ctx, 3);
  if (!pads || !axes) {
    unknown_dims_of_input_rank(ctx, 0);
    return;
  }
  if (axes->empty())
    for (int d = 0; d < rank; ++d) axes->push_back(d);
  if (pads->size() != 2 * axes->size()) fail_shape_inference(pads->size(), " pads for ", axes->size(), " axes");
  auto* out = onnx::getOutputShape(ctx, 0);
  *out = in;
  for (size_t k = 0; k < axes->size(); ++k) {
    auto* d = out->mutable_dim(int(normalized_axis((*axes)[k], rank)));
    if (!d->has_dim_value()) continue;
    d->set_dim_value(d->dim_value() + (*pads)[k] + (*pads)[k + axes->size()]);
  }
}

// Resize-18: scales or sizes cover only the `axes` given, and keep_aspect_ratio_policy
// turns sizes into one scale for all of them.
void resize_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t& a : axes) a = normalized_axis(a, rank);
  auto* out = onnx::getOutputShape(ctx, 0);
  *out = in;
  auto all_known = [&] {
    for (int64_t a : axes)
      if (!in.dim(int(a)).has_dim_value()) return false;
    return true;
  };
  const auto sizes = has_input(ctx, 3) ? constant_ints(ctx, 3) : std::nullopt;
  const auto scales = has_input(ctx, 2) ? constant_floats(ctx, 2) : std::nullopt;
  if (sizes && !sizes->empty()) {
    if (sizes->size() != axes.size()) fail_shape_inference(sizes->size(), " sizes for ", axes.size(), " axes");
    const std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy", std::string("stretch"));
    if (policy == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) out->mutable_dim(int(axes[k]))->set_dim_value((*sizes)[k]);
      return;
    }
    if (policy != "not_larger" && policy != "not_smaller")
      fail_shape_inference("unknown keep_aspect_ratio_policy '", policy, "'");
    if (!all_known()) return;
    std::vector<int64_t> in_dims;
    for (int64_t a : axes) in_dims.push_back(in.dim(int(a)).dim_value());
    // The rule the Resize kernels use, so the inferred shape is the one they produce.
    const double scale = resize::aspect_ratio_scale(policy == "not_larger", *sizes, in_dims);
    for (size_t k = 0; k < axes.size(); ++k)
      out->mutable_dim(int(axes[k]))->set_dim_value(resize::aspect_ratio_length(in_dims[k], scale));
    return;
  }
  if (scales && !scales->empty()) {
    if (scales->size() != axes.size()) fail_shape_inference(scales->size(), " scales for ", axes.size(), " axes");
    for (size_t k = 0; k < axes.size(); ++k) {
      auto* d = out->mutable_dim(int(axes[k]));
      if (d->has_dim_value()) d->set_dim_value(int64_t(std::floor(double(d->dim_value()) * double((*scales)[k]))));
    }
    return;
  }
  for (int64_t a : axes) out->mutable_dim(int(a))->clear_dim_value();
}

// AveragePool-19 and LpPool-18: dilations (and LpPool's ceil_mode), as MaxPool has them.
void dilated_pool_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  onnx::convPoolShapeInference(ctx, /*use_dilation=*/true, /*require_kernel_shape=*/true, 0, 1);
}

// Ops whose only output has the shape and type of the first input.
void same_as_first_input(InferenceContext& ctx) { onnx::propagateShapeAndTypeFromFirstInput(ctx); }

// Attention-23: the 3-D form (batch, sequence, heads * head size) or the 4-D one
// (batch, heads, sequence, head size), with an optional past key/value cache.
void attention_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  for (size_t o = 1; o < 3 && o < ctx.getNumOutputs(); ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 1, o);
  if (!onnx::hasNInputShapes(ctx, 3)) return;
  const auto& q = onnx::getInputShape(ctx, 0);
  const auto& k = onnx::getInputShape(ctx, 1);
  const auto& v = onnx::getInputShape(ctx, 2);
  if (q.dim_size() != k.dim_size() || q.dim_size() != v.dim_size() || (q.dim_size() != 3 && q.dim_size() != 4))
    fail_shape_inference("Q, K and V must all be 3-D or all 4-D");
  auto* y = onnx::getOutputShape(ctx, 0);
  *y = q;
  if (q.dim_size() == 3) {
    const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", 0);
    const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", 0);
    if (q_heads <= 0 || kv_heads <= 0) fail_shape_inference("3-D inputs need q_num_heads and kv_num_heads");
    auto* yd = y->mutable_dim(2);
    yd->clear_dim_param();
    if (v.dim(2).has_dim_value())
      yd->set_dim_value(v.dim(2).dim_value() / kv_heads * q_heads);
    else
      yd->clear_dim_value();
    return;
  }
  *y->mutable_dim(3) = v.dim(3);
  // present_key/present_value: the past cache with this step's keys/values appended.
  for (size_t o = 1; o < 3 && o < ctx.getNumOutputs(); ++o) {
    const size_t past = o + 3;  // past_key is input 4, past_value input 5
    const auto& cur = o == 1 ? k : v;
    auto* present = onnx::getOutputShape(ctx, o);
    *present = cur;
    auto* seq = present->mutable_dim(2);
    if (!onnx::hasInputShape(ctx, past)) continue;
    const auto& p = onnx::getInputShape(ctx, past);
    seq->clear_dim_param();
    if (p.dim_size() == 4 && p.dim(2).has_dim_value() && cur.dim(2).has_dim_value())
      seq->set_dim_value(p.dim(2).dim_value() + cur.dim(2).dim_value());
    else
      seq->clear_dim_value();
  }
}

// GridSample-20: X [N, C, D1 .. Dr] sampled at grid [N, O1 .. Or, r] gives [N, C, O1 .. Or].
void grid_sample_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& grid = onnx::getInputShape(ctx, 1);
  if (x.dim_size() < 3 || grid.dim_size() != x.dim_size())
    fail_shape_inference("X and grid must have the same rank, at least 3");
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  *y->add_dim() = x.dim(0);
  *y->add_dim() = x.dim(1);
  for (int d = 1; d + 1 < grid.dim_size(); ++d) *y->add_dim() = grid.dim(d);
}

// BitwiseAnd/Or/Xor-18: numpy broadcasting of A and B.
void broadcast_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasNInputShapes(ctx, 2))
    onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
                                               *onnx::getOutputShape(ctx, 0));
}

// QuantizeLinear-19/21/23: x's shape, of the zero point's type, else output_dtype, else uint8.
void quantize_rule(InferenceContext& ctx) {
  const auto* zp = has_input(ctx, 2) ? ctx.getInputType(2) : nullptr;
  const int64_t requested = onnx::getAttribute(ctx, "output_dtype", int64_t(0));
  if (zp && zp->has_tensor_type())
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  else
    onnx::updateOutputElemType(ctx, 0, requested != 0 ? int32_t(requested) : int32_t(onnx::TensorProto::UINT8));
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// DequantizeLinear-19/21/23: x's shape, of the scale's type (or output_dtype, 23).
void dequantize_rule(InferenceContext& ctx) {
  const int64_t requested = onnx::getAttribute(ctx, "output_dtype", int64_t(0));
  if (requested != 0)
    onnx::updateOutputElemType(ctx, 0, int32_t(requested));
  else
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// DFT-20: the axis (default -2) became an input; the transformed axis gets dft_length (or
// dft_length / 2 + 1 when onesided) bins and the last axis holds (real, imaginary).
void dft_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 1)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const int rank = x.dim_size();
  if (rank < 2) fail_shape_inference("the input must have rank >= 2");
  int64_t axis = -2;
  if (has_input(ctx, 2)) {
    const auto axes = constant_ints(ctx, 2);
    if (!axes) {
      unknown_dims_of_input_rank(ctx, 0);
      return;
    }
    if (axes->size() != 1) fail_shape_inference("axis must hold one value");
    axis = (*axes)[0];
  }
  axis = normalized_axis(axis, rank);
  if (axis == rank - 1) fail_shape_inference("axis must not be the last (complex) axis");
  auto* y = onnx::getOutputShape(ctx, 0);
  y->CopyFrom(x);
  y->mutable_dim(rank - 1)->set_dim_value(2);
  auto* bins = y->mutable_dim(int(axis));
  std::optional<int64_t> n;
  if (has_input(ctx, 1)) {
    const auto length = constant_ints(ctx, 1);
    if (length && length->size() == 1) n = (*length)[0];
  } else if (x.dim(int(axis)).has_dim_value()) {
    n = x.dim(int(axis)).dim_value();
  }
  bins->Clear();
  if (n) bins->set_dim_value(onnx::getAttribute(ctx, "onesided", 0) != 0 ? *n / 2 + 1 : *n);
}

// AffineGrid-20: theta [N, 2, 3] or [N, 3, 4] and size (N, C, [D,] H, W) give the grid
// [N, [D,] H, W, 2 | 3].
void affine_grid_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto size = constant_ints(ctx, 1);
  if (!size) return;
  if (size->size() != 4 && size->size() != 5) fail_shape_inference("size must hold 4 or 5 values");
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  y->add_dim()->set_dim_value((*size)[0]);
  for (size_t d = 2; d < size->size(); ++d) y->add_dim()->set_dim_value((*size)[d]);
  y->add_dim()->set_dim_value(int64_t(size->size()) - 2);
}

// DeformConv-19: Y [N, M, oH, oW] from X's N, W's M and the offset's spatial dims.
void deform_conv_rule(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 3)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& w = onnx::getInputShape(ctx, 1);
  const auto& offset = onnx::getInputShape(ctx, 2);
  if (x.dim_size() < 3 || w.dim_size() != x.dim_size() || offset.dim_size() != x.dim_size())
    fail_shape_inference("X, W and offset must have the same rank, at least 3");
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  *y->add_dim() = x.dim(0);
  *y->add_dim() = w.dim(0);
  for (int d = 2; d < offset.dim_size(); ++d) *y->add_dim() = offset.dim(d);
}

OpSchema fresh(const char* op, int since) {
  OpSchema s;
  s.SetName(op).SetDomain("").SinceVersion(since).SetLocation(kSchemaFile, 0);
  return s;
}

// A new version of an op that ONNX 1.12 has: the form (inputs, outputs, attributes, type
// constraints) and the rules of its latest schema at opset `from`, built anew (a finalized
// schema cannot be copied and finalized again).
OpSchema derived(const char* op, int from, int since) {
  const OpSchema* base = onnx::OpSchemaRegistry::Schema(op, from, "");
  VKG_CHECK(base, "ONNX has no schema of " << op << " at opset " << from);
  OpSchema s = fresh(op, since);
  int i = 0;
  for (const auto& p : base->inputs())
    s.Input(i++, p.GetName(), "", p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(), p.GetMinArity(),
            p.GetDifferentiationCategory());
  i = 0;
  for (const auto& p : base->outputs())
    s.Output(i++, p.GetName(), "", p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(), p.GetMinArity(),
             p.GetDifferentiationCategory());
  for (const auto& [name, attr] : base->attributes()) s.Attr(attr);
  for (const auto& tc : base->typeConstraintParams())
    s.TypeConstraint(tc.type_param_str, tc.allowed_type_strs, tc.description);
  if (base->has_type_and_shape_inference_function())
    s.TypeAndShapeInferenceFunction(base->GetTypeAndShapeInferenceFunction());
  if (base->has_data_propagation_function()) s.PartialDataPropagationFunction(base->GetDataPropagationFunction());
  return s;
}

OpSchema reduce18(const char* op, int since) {
  OpSchema s = derived(op, 17, since);
  s.Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
      .Attr("noop_with_empty_axes", "", AttributeProto::INT, int64_t(0))
      .TypeAndShapeInferenceFunction(reduce_rule);
  return s;
}

OpSchema normalization(const char* op, int since) {
  OpSchema s = fresh(op, since);
  s.Input(0, "X", "", "T")
      .Input(1, "scale", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "", AttributeProto::INT, int64_t(1))
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(same_as_first_input);
  return s;
}

// New versions of ops ONNX 1.12 has, derived from their opset-17 form: reductions, Split, Pad,
// Resize, pooling and casts.
std::vector<OpSchema> derived_schemas() {
  std::vector<OpSchema> all;
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    all.push_back(reduce18(op, 18));
  {
    OpSchema s = derived("Split", 17, 18);
    s.Attr("num_outputs", "", AttributeProto::INT, false).TypeAndShapeInferenceFunction(split_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = derived("Pad", 17, 18);
    s.Input(3, "axes", "", "Tind", OpSchema::Optional)
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction(pad_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = derived("Resize", 17, 18);
    s.Attr("antialias", "", AttributeProto::INT, int64_t(0))
        .Attr("axes", "", AttributeProto::INTS, false)
        .Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING, std::string("stretch"))
        .TypeAndShapeInferenceFunction(resize_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = derived("AveragePool", 17, 19);
    s.Attr("dilations", "", AttributeProto::INTS, false).TypeAndShapeInferenceFunction(dilated_pool_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = derived("LpPool", 17, 18);
    s.Attr("dilations", "", AttributeProto::INTS, false)
        .Attr("ceil_mode", "", AttributeProto::INT, int64_t(0))
        .TypeAndShapeInferenceFunction(dilated_pool_rule);
    all.push_back(std::move(s));
  }
  for (const char* op : {"Cast", "CastLike"}) {  // 19: saturate (float8 targets only)
    OpSchema s = derived(op, 17, 19);
    s.Attr("saturate", "", AttributeProto::INT, int64_t(1));
    all.push_back(std::move(s));
  }
  return all;
}

// Activations and normalizations.
std::vector<OpSchema> activation_and_normalization_schemas() {
  std::vector<OpSchema> all;
  {
    OpSchema s = fresh("Mish", 18);
    s.Input(0, "X", "", "T")
        .Output(0, "Y", "", "T")
        .TypeConstraint("T", kFloatTypes, "")
        .TypeAndShapeInferenceFunction(same_as_first_input);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = fresh("Gelu", 20);
    s.Input(0, "X", "", "T")
        .Output(0, "Y", "", "T")
        .TypeConstraint("T", kFloatTypes, "")
        .Attr("approximate", "", AttributeProto::STRING, std::string("none"))
        .TypeAndShapeInferenceFunction(same_as_first_input);
    all.push_back(std::move(s));
  }
  for (int since : {18, 21}) {  // 18: scale and bias per group; 21: per channel
    OpSchema s = normalization("GroupNormalization", since);
    s.Input(2, "bias", "", "T").Attr("num_groups", "", AttributeProto::INT, true);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = normalization("RMSNormalization", 23);
    s.Attr("axis", "", AttributeProto::INT, int64_t(-1));
    all.push_back(std::move(s));
  }
  return all;
}

// Sampling, convolution and signal ops: GridSample, DeformConv, AffineGrid, DFT.
std::vector<OpSchema> sampling_and_signal_schemas() {
  std::vector<OpSchema> all;
  {  // 20: N-D inputs, modes "linear" and "cubic" (22 only widened the types)
    OpSchema s = fresh("GridSample", 20);
    s.Input(0, "X", "", "T1")
        .Input(1, "grid", "", "T2")
        .Output(0, "Y", "", "T1")
        .Attr("align_corners", "", AttributeProto::INT, int64_t(0))
        .Attr("mode", "", AttributeProto::STRING, std::string("linear"))
        .Attr("padding_mode", "", AttributeProto::STRING, std::string("zeros"))
        .TypeConstraint("T1", onnx::OpSchema::all_tensor_types(), "")
        .TypeConstraint("T2", kFloatTypes, "")
        .TypeAndShapeInferenceFunction(grid_sample_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = fresh("DeformConv", 19);
    s.Input(0, "X", "", "T")
        .Input(1, "W", "", "T")
        .Input(2, "offset", "", "T")
        .Input(3, "B", "", "T", OpSchema::Optional)
        .Input(4, "mask", "", "T", OpSchema::Optional)
        .Output(0, "Y", "", "T")
        .Attr("dilations", "", AttributeProto::INTS, false)
        .Attr("group", "", AttributeProto::INT, int64_t(1))
        .Attr("kernel_shape", "", AttributeProto::INTS, false)
        .Attr("offset_group", "", AttributeProto::INT, int64_t(1))
        .Attr("pads", "", AttributeProto::INTS, false)
        .Attr("strides", "", AttributeProto::INTS, false)
        .TypeConstraint("T", kFloatTypes, "")
        .TypeAndShapeInferenceFunction(deform_conv_rule);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = fresh("AffineGrid", 20);
    s.Input(0, "theta", "", "T1")
        .Input(1, "size", "", "T2")
        .Output(0, "grid", "", "T1")
        .Attr("align_corners", "", AttributeProto::INT, int64_t(0))
        .TypeConstraint("T1", kFloatTypes, "")
        .TypeConstraint("T2", {"tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction(affine_grid_rule);
    all.push_back(std::move(s));
  }
  {  // 20: the axis became an input (default -2)
    OpSchema s = fresh("DFT", 20);
    s.Input(0, "input", "", "T1")
        .Input(1, "dft_length", "", "T2", OpSchema::Optional)
        .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
        .Output(0, "output", "", "T1")
        .Attr("inverse", "", AttributeProto::INT, int64_t(0))
        .Attr("onesided", "", AttributeProto::INT, int64_t(0))
        .TypeConstraint("T1", kFloatTypes, "")
        .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction(dft_rule);
    all.push_back(std::move(s));
  }
  return all;
}

// The transformer ops of opset 23: RotaryEmbedding, Attention.
std::vector<OpSchema> transformer_schemas() {
  std::vector<OpSchema> all;
  {
    OpSchema s = fresh("RotaryEmbedding", 23);
    s.Input(0, "X", "", "T")
        .Input(1, "cos_cache", "", "T")
        .Input(2, "sin_cache", "", "T")
        .Input(3, "position_ids", "", "M", OpSchema::Optional)
        .Output(0, "Y", "", "T")
        .Attr("interleaved", "", AttributeProto::INT, int64_t(0))
        .Attr("num_heads", "", AttributeProto::INT, false)
        .Attr("rotary_embedding_dim", "", AttributeProto::INT, int64_t(0))
        .TypeConstraint("T", kFloatTypes, "")
        .TypeConstraint("M", {"tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction(same_as_first_input);
    all.push_back(std::move(s));
  }
  {
    OpSchema s = fresh("Attention", 23);
    s.Input(0, "Q", "", "T1")
        .Input(1, "K", "", "T1")
        .Input(2, "V", "", "T2")
        .Input(3, "attn_mask", "", "U", OpSchema::Optional)
        .Input(4, "past_key", "", "T1", OpSchema::Optional)
        .Input(5, "past_value", "", "T2", OpSchema::Optional)
        .Output(0, "Y", "", "T1")
        .Output(1, "present_key", "", "T1", OpSchema::Optional)
        .Output(2, "present_value", "", "T2", OpSchema::Optional)
        .Output(3, "qk_matmul_output", "", "T1", OpSchema::Optional)
        .Attr("is_causal", "", AttributeProto::INT, int64_t(0))
        .Attr("kv_num_heads", "", AttributeProto::INT, false)
        .Attr("q_num_heads", "", AttributeProto::INT, false)
        .Attr("qk_matmul_output_mode", "", AttributeProto::INT, int64_t(0))
        .Attr("scale", "", AttributeProto::FLOAT, false)
        .Attr("softcap", "", AttributeProto::FLOAT, 0.0f)
        .Attr("softmax_precision", "", AttributeProto::INT, false)
        .TypeConstraint("T1", kFloatTypes, "")
        .TypeConstraint("T2", kFloatTypes, "")
        .TypeConstraint("U", {"tensor(bool)", "tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"},
                        "")
        .TypeAndShapeInferenceFunction(attention_rule);
    all.push_back(std::move(s));
  }
  return all;
}

// Bitwise ops on integers.
std::vector<OpSchema> bitwise_schemas() {
  std::vector<OpSchema> all;
  const std::vector<std::string> integers = {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
                                             "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    OpSchema s = fresh(op, 18);
    s.Input(0, "A", "", "T")
        .Input(1, "B", "", "T")
        .Output(0, "C", "", "T")
        .TypeConstraint("T", integers, "")
        .TypeAndShapeInferenceFunction(broadcast_rule);
    all.push_back(std::move(s));
  }
  OpSchema s = fresh("BitwiseNot", 18);
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", integers, "")
      .TypeAndShapeInferenceFunction(same_as_first_input);
  all.push_back(std::move(s));
  return all;
}

// QuantizeLinear and DequantizeLinear at each opset that changed their form.
std::vector<OpSchema> quantization_schemas() {
  std::vector<OpSchema> all;
  for (int since : {19, 21, 23}) {  // 19: float16 scales, saturate; 21: blocks, 16 bits, output_dtype; 23: precision
    const std::vector<std::string> floats_and_int32 = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)",
                                                       "tensor(int32)"};
    std::vector<std::string> quantized = {"tensor(int8)", "tensor(uint8)"};
    if (since >= 21) quantized.insert(quantized.end(), {"tensor(int16)", "tensor(uint16)"});
    OpSchema q = fresh("QuantizeLinear", since);
    q.Input(0, "x", "", "T1")
        .Input(1, "y_scale", "", since >= 23 ? "T2" : "T1")
        .Input(2, "y_zero_point", "", since >= 23 ? "T3" : "T2", OpSchema::Optional)
        .Output(0, "y", "", since >= 23 ? "T3" : "T2")
        .Attr("axis", "", AttributeProto::INT, int64_t(1))
        .Attr("saturate", "", AttributeProto::INT, int64_t(1))
        .TypeConstraint("T1", floats_and_int32, "")
        .TypeConstraint(since >= 23 ? "T3" : "T2", quantized, "")
        .TypeAndShapeInferenceFunction(quantize_rule);
    if (since >= 21)
      q.Attr("block_size", "", AttributeProto::INT, int64_t(0))
          .Attr("output_dtype", "", AttributeProto::INT, int64_t(0));
    if (since >= 23)
      q.Attr("precision", "", AttributeProto::INT, int64_t(0)).TypeConstraint("T2", floats_and_int32, "");
    all.push_back(std::move(q));
    std::vector<std::string> dequantized = quantized;
    dequantized.push_back("tensor(int32)");
    OpSchema d = fresh("DequantizeLinear", since);
    d.Input(0, "x", "", "T1")
        .Input(1, "x_scale", "", "T2")
        .Input(2, "x_zero_point", "", "T1", OpSchema::Optional)
        .Output(0, "y", "", since >= 23 ? "T3" : "T2")
        .Attr("axis", "", AttributeProto::INT, int64_t(1))
        .TypeConstraint("T1", dequantized, "")
        .TypeConstraint("T2", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
        .TypeAndShapeInferenceFunction(dequantize_rule);
    if (since >= 21) d.Attr("block_size", "", AttributeProto::INT, int64_t(0));
    if (since >= 23)
      d.Attr("output_dtype", "", AttributeProto::INT, int64_t(0))
          .TypeConstraint("T3", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "");
    all.push_back(std::move(d));
  }
  return all;
}

// Every schema this file registers, in registration order.
std::vector<OpSchema> newer_schemas() {
  using SchemaTable = std::vector<OpSchema> (*)();
  std::vector<OpSchema> all;
  for (SchemaTable table : {derived_schemas, activation_and_normalization_schemas, sampling_and_signal_schemas,
                            transformer_schemas, bitwise_schemas, quantization_schemas})
    for (OpSchema& s : table()) all.push_back(std::move(s));
  return all;
}

}  // namespace

void register_newer_onnx_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // ONNX 1.12 refuses schemas above its own opset range; the range is data it owns, and
    // raising it is what a newer ONNX release does.
    auto& ranges = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map());
    auto& onnx_range = ranges[onnx::ONNX_DOMAIN];
    onnx_range.second = std::max(onnx_range.second, int(kMaxSupportedOpset));
    for (OpSchema& s : newer_schemas()) {
      const OpSchema* existing = onnx::OpSchemaRegistry::Schema(s.Name(), s.SinceVersion(), s.domain());
      if (existing && existing->SinceVersion() == s.SinceVersion()) continue;  // a newer ONNX has it
      const std::string name = s.Name();
      const int since = s.SinceVersion();
      onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(s);  // reports failures on stderr only
      const OpSchema* now = onnx::OpSchemaRegistry::Schema(name, since, "");
      VKG_CHECK(now && now->SinceVersion() == since, "cannot register the schema of " << name << "-" << since);
    }
  });
}

bool is_vkgraphy_schema(const onnx::OpSchema& schema) { return schema.file() == kSchemaFile; }

std::string vkgraphy_shape_rules_used(const OnnxModel& model) {
  register_newer_onnx_schemas();
  const int opset = int(default_opset(model));
  std::map<std::string, int> used;
  for (const auto& node : model.proto->graph().node()) {
    if (!(node.domain().empty() || node.domain() == "ai.onnx")) continue;
    const OpSchema* s = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
    if (s && is_vkgraphy_schema(*s)) ++used[s->Name() + "-" + std::to_string(s->SinceVersion())];
  }
  std::string text;
  for (const auto& [version, count] : used)
    text += (text.empty() ? "" : ", ") + version + (count > 1 ? " x" + std::to_string(count) : "");
  return text;
}

}  // namespace vkg
