// If, Loop and Scan (every opset): their subgraphs run through the backend's
// SubgraphRunner, reading tensors of the enclosing graphs by name. Loop-carried and
// scan-state values pass from one iteration to the next; scan outputs are stacked.
#include <cstring>
#include <limits>

#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

bool truth(const KernelContext& ctx, const Tensor& t, const char* what) {
  VKG_CHECK(t.size() == 1, ctx.node.describe() << ": " << what << " must hold one value, got " << t.describe());
  return t.get_as_double(0) != 0;
}

// `part` along `axis` of a tensor with that axis removed: one slice of a scan input.
Tensor slice_axis(const Tensor& t, int64_t axis, int64_t index) {
  const std::vector<int64_t> strides = contiguous_strides(t.shape());
  Shape shape;
  std::vector<int64_t> src;
  for (size_t d = 0; d < t.shape().size(); ++d) {
    if (int64_t(d) == axis) continue;
    shape.push_back(t.shape()[d]);
    src.push_back(strides[d]);
  }
  Tensor out(t.dtype(), shape);
  const size_t elem = dtype_size(t.dtype());
  copy_strided(t.raw() + size_t(index * strides[size_t(axis)]) * elem, src, out.raw(), contiguous_strides(shape), shape,
               elem);
  return out;
}

// The tensors `parts` (same dtype and shape) stacked along a new axis `axis`, in reverse
// order when `reverse`. With no parts, `empty_like` gives the dtype and element shape.
Tensor stack(const Node& node, const std::vector<Tensor>& parts, int64_t axis, bool reverse,
             const ValueInfo& empty_like) {
  if (parts.empty()) {
    Shape shape = {0};
    if (empty_like.static_shape()) {
      const Shape elem = empty_like.concrete_shape();
      shape.insert(shape.end(), elem.begin(), elem.end());
    }
    return Tensor(empty_like.dtype.value_or(DType::Float32), shape);
  }
  const Tensor& first = parts[0];
  const int64_t rank = first.rank() + 1;
  VKG_CHECK(axis >= -rank && axis < rank, node.describe() << ": scan output axis " << axis << " is out of range");
  if (axis < 0) axis += rank;
  Shape shape = first.shape();
  shape.insert(shape.begin() + axis, int64_t(parts.size()));
  Tensor out(first.dtype(), shape);
  const std::vector<int64_t> out_strides = contiguous_strides(shape);
  std::vector<int64_t> dst;
  for (size_t d = 0; d < shape.size(); ++d)
    if (int64_t(d) != axis) dst.push_back(out_strides[d]);
  const size_t elem = dtype_size(first.dtype());
  for (size_t k = 0; k < parts.size(); ++k) {
    const Tensor& p = parts[reverse ? parts.size() - 1 - k : k];
    VKG_CHECK(p.dtype() == first.dtype() && p.shape() == first.shape(),
              node.describe() << ": scan output iterations differ: " << p.describe() << " and " << first.describe());
    copy_strided(p.raw(), contiguous_strides(p.shape()),
                 out.raw() + size_t(int64_t(k) * out_strides[size_t(axis)]) * elem, dst, p.shape(), elem);
  }
  return out;
}

std::vector<Tensor> if_kernel(const KernelContext& ctx) {
  const bool taken = truth(ctx, ctx.input(0), "the condition");
  const Graph& branch = ctx.node.attr_graph(taken ? "then_branch" : "else_branch");
  std::vector<Tensor> outs = ctx.run(branch, {});
  VKG_CHECK(outs.size() >= ctx.num_outputs(), ctx.node.describe()
                                                  << ": the " << (taken ? "then" : "else") << " branch has "
                                                  << outs.size() << " outputs, the node " << ctx.num_outputs());
  return outs;
}

// Loop: inputs M (trip count), cond, then the loop-carried values; the body takes
// (iteration, cond, carried...) and returns (cond, carried..., scan outputs...).
std::vector<Tensor> loop_kernel(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Graph& body = node.attr_graph("body");
  const bool has_trips = ctx.has_input(0), has_cond = ctx.has_input(1);
  VKG_CHECK(has_trips || has_cond, node.describe() << ": a Loop with neither a trip count nor a condition never ends");
  // Read exactly: exporters write INT64_MAX for "no limit", which a double cannot hold.
  const int64_t trips = has_trips ? ctx.input(0).to_int64s().at(0) : std::numeric_limits<int64_t>::max();
  bool cond = has_cond ? truth(ctx, ctx.input(1), "the condition") : true;
  std::vector<Tensor> carried;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) carried.push_back(ctx.input(i));
  VKG_CHECK(body.inputs.size() == 2 + carried.size() && body.outputs.size() >= 1 + carried.size(),
            node.describe() << ": the body takes " << body.inputs.size() << " inputs and returns "
                            << body.outputs.size() << " outputs for " << carried.size() << " loop-carried values");
  const size_t scans = body.outputs.size() - 1 - carried.size();
  std::vector<std::vector<Tensor>> scanned(scans);
  for (int64_t i = 0; i < trips && cond; ++i) {
    std::vector<Tensor> ins = {Tensor::scalar<int64_t>(i), Tensor::scalar<bool>(cond)};
    ins.insert(ins.end(), carried.begin(), carried.end());
    std::vector<Tensor> outs = ctx.run(body, ins);
    cond = truth(ctx, outs[0], "the body's condition output");
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = std::move(outs[1 + k]);
    for (size_t k = 0; k < scans; ++k) scanned[k].push_back(std::move(outs[1 + carried.size() + k]));
  }
  const size_t first_scan = 1 + carried.size();
  std::vector<Tensor> result = std::move(carried);
  for (size_t k = 0; k < scans; ++k) result.push_back(stack(node, scanned[k], 0, false, body.outputs[first_scan + k]));
  return result;
}

// One scan: `states`, then `sequences` sliced along `axes` (from the end where `in_dirs`
// says 1) for `length` steps; the body's scan output slices stacked along `out_axes`.
std::vector<Tensor> run_scan(const KernelContext& ctx, const Graph& body, std::vector<Tensor> states,
                             const std::vector<const Tensor*>& sequences, const std::vector<int64_t>& axes,
                             const std::vector<int64_t>& in_dirs, const std::vector<int64_t>& out_axes,
                             const std::vector<int64_t>& out_dirs, int64_t length) {
  const size_t n = states.size(), k = out_axes.size();
  std::vector<std::vector<Tensor>> scanned(k);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> ins = states;
    for (size_t j = 0; j < sequences.size(); ++j)
      ins.push_back(slice_axis(*sequences[j], axes[j], in_dirs[j] ? length - 1 - t : t));
    std::vector<Tensor> outs = ctx.run(body, ins);
    for (size_t i = 0; i < n; ++i) states[i] = std::move(outs[i]);
    for (size_t o = 0; o < k; ++o) scanned[o].push_back(std::move(outs[n + o]));
  }
  std::vector<Tensor> result = std::move(states);
  for (size_t o = 0; o < k; ++o)
    result.push_back(stack(ctx.node, scanned[o], out_axes[o], out_dirs[o] != 0, body.outputs[n + o]));
  return result;
}

// Axes given per scan input or output (default 0), normalized against `ranks`.
std::vector<int64_t> scan_attr(const Node& node, const char* name, size_t count) {
  const std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(count, 0));
  VKG_CHECK(v.size() == count, node.describe() << ": " << name << " has " << v.size() << " values, expected " << count);
  return v;
}

// Scan-8: sequence_lens, states and scan inputs all carry a batch axis first; each batch
// element scans along axis 1 for its sequence length (steps past it are zeros).
std::vector<Tensor> scan8(const KernelContext& ctx, const Graph& body, int64_t n, int64_t m, int64_t k) {
  const Node& node = ctx.node;
  const auto dirs = scan_attr(node, "directions", size_t(m));
  const Tensor& first = ctx.input(size_t(1 + n));
  const int64_t batch = first.dim(0), length = first.dim(1);
  std::vector<int64_t> lens(size_t(batch), length);
  if (ctx.has_input(0)) lens = ctx.input(0).to_int64s();
  VKG_CHECK(int64_t(lens.size()) == batch, node.describe() << ": sequence_lens must have one value per batch element");
  std::vector<std::vector<Tensor>> per_output(size_t(n + k));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> states, slices;
    for (int64_t i = 0; i < n; ++i) states.push_back(slice_axis(ctx.input(size_t(1 + i)), 0, b));
    for (int64_t j = 0; j < m; ++j) slices.push_back(slice_axis(ctx.input(size_t(1 + n + j)), 0, b));
    std::vector<const Tensor*> seqs;
    for (const Tensor& t : slices) seqs.push_back(&t);
    const int64_t len = lens[size_t(b)];
    VKG_CHECK(len >= 0 && len <= length, node.describe()
                                             << ": sequence length " << len << " is outside [0, " << length << "]");
    std::vector<Tensor> outs = run_scan(ctx, body, states, seqs, std::vector<int64_t>(size_t(m), 0), dirs,
                                        std::vector<int64_t>(size_t(k), 0), std::vector<int64_t>(size_t(k), 0), len);
    for (int64_t o = n; o < n + k && len < length; ++o) {  // pad to the full length with zeros
      Shape shape = outs[size_t(o)].shape();
      if (shape.empty()) break;
      shape[0] = length;
      Tensor padded(outs[size_t(o)].dtype(), shape);
      std::memcpy(padded.raw(), outs[size_t(o)].raw(), outs[size_t(o)].nbytes());
      outs[size_t(o)] = std::move(padded);
    }
    for (size_t o = 0; o < outs.size(); ++o) per_output[o].push_back(std::move(outs[o]));
  }
  std::vector<Tensor> result;
  for (int64_t o = 0; o < n + k; ++o)
    result.push_back(stack(node, per_output[size_t(o)], 0, false, body.outputs[size_t(o)]));
  return result;
}

// Scan: N state inputs, then num_scan_inputs sequences sliced along their scan axes; the
// body returns (states..., scan output slices...).
std::vector<Tensor> scan_kernel(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Graph& body = node.attr_graph("body");
  const int64_t m = node.attr_int("num_scan_inputs");
  const int64_t n = int64_t(ctx.num_inputs()) - m - (ctx.opset < 9 ? 1 : 0);
  const int64_t k = int64_t(body.outputs.size()) - n;
  VKG_CHECK(m >= 1 && n >= 0 && k >= 0 && int64_t(body.inputs.size()) == n + m,
            node.describe() << ": the body's " << body.inputs.size() << " inputs and " << body.outputs.size()
                            << " outputs do not fit " << ctx.num_inputs() << " inputs with num_scan_inputs " << m);
  if (ctx.opset < 9) return scan8(ctx, body, n, m, k);
  const auto in_axes = scan_attr(node, "scan_input_axes", size_t(m));
  const auto in_dirs = scan_attr(node, "scan_input_directions", size_t(m));
  const auto out_axes = scan_attr(node, "scan_output_axes", size_t(k));
  const auto out_dirs = scan_attr(node, "scan_output_directions", size_t(k));
  std::vector<Tensor> states;
  for (int64_t i = 0; i < n; ++i) states.push_back(ctx.input(size_t(i)));
  std::vector<const Tensor*> seqs;
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (int64_t j = 0; j < m; ++j) {
    const Tensor& t = ctx.input(size_t(n + j));
    int64_t axis = in_axes[size_t(j)];
    VKG_CHECK(axis >= -t.rank() && axis < t.rank(),
              node.describe() << ": scan input axis " << axis << " is out of range for " << t.describe());
    if (axis < 0) axis += t.rank();
    VKG_CHECK(length < 0 || t.dim(axis) == length, node.describe() << ": the scan inputs have different lengths ("
                                                                   << length << " and " << t.dim(axis) << ")");
    length = t.dim(axis);
    axes.push_back(axis);
    seqs.push_back(&t);
  }
  return run_scan(ctx, body, std::move(states), seqs, axes, in_dirs, out_axes, out_dirs, length);
}

}  // namespace

void register_control_flow_ops(OpRegistry& registry) {
  registry.add("If", if_kernel);
  registry.add("Loop", loop_kernel);
  registry.add("Scan", scan_kernel);
}

}  // namespace vkg
