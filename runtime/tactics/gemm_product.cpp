// Every gemm layer described as one strided, batched product (Product, the
// push constants of shaders/gemm/common.glsl): MatMul with numpy semantics and
// Gemm with its transposes and C; and the checks and small weights every gemm
// plan makes.
#include <algorithm>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/tactics/gemm_planners.h"

namespace vkg::gemm_tactics {

Product matmul_product(const LayerContext& ctx, size_t a_input, size_t b_input, bool fold_batches) {
  const Shape& a_in = ctx.input(a_input).shape;
  const Shape& b_in = ctx.input(b_input).shape;
  VKG_CHECK(!a_in.empty() && !b_in.empty(), ctx.node.describe()
                                                << ": inputs must have rank >= 1, got " << shape_to_string(a_in)
                                                << " and " << shape_to_string(b_in));
  Shape a_shape = a_in, b_shape = b_in;
  // fold-transpose: an input bound as the Transpose's input, its last two axes read swapped.
  const bool trans_a = a_shape.size() >= 2 && reads_transposed(ctx.node, a_input);
  const bool trans_b = b_shape.size() >= 2 && reads_transposed(ctx.node, b_input);
  if (trans_a) std::swap(a_shape[a_shape.size() - 2], a_shape.back());
  if (trans_b) std::swap(b_shape[b_shape.size() - 2], b_shape.back());
  if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b_shape.size() == 1) b_shape.push_back(1);
  Product p;
  p.a_input = a_input;
  p.b_input = b_input;
  p.M = a_shape[a_shape.size() - 2];
  p.K = a_shape.back();
  p.N = b_shape.back();
  VKG_CHECK(b_shape[b_shape.size() - 2] == p.K,
            ctx.node.describe() << ": cannot multiply " << shape_to_string(a_in) << " by " << shape_to_string(b_in));
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(a_batch, b_batch);
  } catch (const Error& e) {
    VKG_THROW(ctx.node.describe() << ": batch dims do not broadcast: " << e.what());
  }
  p.batches = num_elements(batch);
  const int64_t a_batches = num_elements(a_batch);
  p.b_batches = num_elements(b_batch);
  p.a_sm = trans_a ? 1 : p.K, p.a_sk = trans_a ? p.M : 1, p.a_bs = p.M * p.K;
  p.b_sk = trans_b ? 1 : p.N, p.b_sn = trans_b ? p.K : 1, p.b_bs = p.K * p.N;
  if (fold_batches && !trans_a && p.b_batches == 1 && a_batches == p.batches) {
    // B is shared: the batches of A are just more rows.
    p.M *= p.batches;
    p.batches = 1;
    p.a_bs = p.b_bs = 0;
    return p;
  }
  // A batch shape whose size equals the output's broadcasts without expanding.
  const bool a_simple = a_batches == 1 || a_batches == p.batches;
  const bool b_simple = p.b_batches == 1 || p.b_batches == p.batches;
  if (a_simple && b_simple) {
    if (a_batches == 1) p.a_bs = 0;
    if (p.b_batches == 1) p.b_bs = 0;
    return p;
  }
  const std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
  const std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < p.batches; ++i) {
    int64_t ai = 0, bi = 0;
    for (size_t d = 0; d < batch.size(); ++d) ai += idx[d] * a_strides[d], bi += idx[d] * b_strides[d];
    p.a_index.push_back(ai);
    p.b_index.push_back(bi);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return p;
}

Product gemm_product(const LayerContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  VKG_CHECK(a.size() == 2 && b.size() == 2, ctx.node.describe() << ": A and B must be 2-D, got " << shape_to_string(a)
                                                                << " and " << shape_to_string(b));
  const bool trans_a = ctx.node.attr_int("transA", 0) != 0;
  const bool trans_b = ctx.node.attr_int("transB", 0) != 0;
  Product p;
  p.M = trans_a ? a[1] : a[0];
  p.K = trans_a ? a[0] : a[1];
  p.N = trans_b ? b[0] : b[1];
  VKG_CHECK((trans_b ? b[1] : b[0]) == p.K, ctx.node.describe() << ": cannot multiply A " << shape_to_string(a)
                                                                << " (transA " << trans_a << ") by B "
                                                                << shape_to_string(b) << " (transB " << trans_b << ")");
  p.a_sm = trans_a ? 1 : p.K;
  p.a_sk = trans_a ? p.M : 1;
  p.b_sk = trans_b ? 1 : p.N;
  p.b_sn = trans_b ? p.K : 1;
  return p;
}

std::array<int64_t, 2> gemm_c_strides(const LayerContext& ctx, int64_t m, int64_t n) {
  const Shape& c = ctx.input(2).shape;
  VKG_CHECK(c.size() <= 2, ctx.node.describe() << ": C " << shape_to_string(c) << " has rank > 2");
  std::vector<int64_t> s;
  try {
    s = broadcast_strides(c, {m, n});
    VKG_CHECK(broadcast_shapes(c, {m, n}) == Shape({m, n}), "");
  } catch (const Error&) {
    VKG_THROW(ctx.node.describe() << ": C " << shape_to_string(c) << " does not broadcast to the output [" << m << ", "
                                  << n << "]");
  }
  return {s[0], s[1]};
}

bool dtypes_supported(const LayerContext& ctx, std::string& why_not) {
  auto check = [&](const LayerTensor& t) {
    if (!t.present() || storage_for(t.dtype, Precision::FP32)) return true;
    why_not = std::string("tensor '") + t.name + "' has type " + dtype_name(t.dtype) +
              ", which the Vulkan backend does not support";
    return false;
  };
  return std::all_of(ctx.inputs.begin(), ctx.inputs.end(), check) &&
         std::all_of(ctx.outputs.begin(), ctx.outputs.end(), check);
}

bool buffers_fit(const LayerContext& ctx, const LayerPlan& plan, std::string& why_not) {
  const uint64_t range = ctx.device.max_storage_buffer_range;
  if (range == 0) return true;
  auto fits = [&](uint64_t bytes, const std::string& what) {
    if (bytes <= range) return true;
    why_not = what + " needs " + std::to_string(bytes) + " bytes, more than the device's storage buffer range of " +
              std::to_string(range);
    return false;
  };
  for (const LayerTensor& t : ctx.inputs) {
    if (t.present() && !fits(uint64_t(t.size()) * storage_element_bytes(t.storage), "input '" + t.name + "'"))
      return false;
  }
  for (const LayerTensor& t : ctx.outputs) {
    if (t.present() && !fits(uint64_t(t.size()) * storage_element_bytes(t.storage), "output '" + t.name + "'"))
      return false;
  }
  for (const Tensor& w : plan.weights) {
    if (!fits(w.nbytes(), "a packed weight")) return false;
  }
  return true;
}

BindingRef batch_table(const Product& p, LayerPlan& plan, BindingRef zero) {
  if (p.a_index.empty()) return zero;
  std::vector<int32_t> table;
  for (size_t i = 0; i < p.a_index.size(); ++i) {
    table.push_back(int32_t(p.a_index[i] * p.a_bs));
    table.push_back(int32_t(p.b_index[i] * p.b_bs));
  }
  return add_weight(plan, Tensor::from_vector<int32_t>({int64_t(table.size())}, table));
}

BindingRef zero_weight(LayerPlan& plan) { return add_weight(plan, Tensor::from_vector<int32_t>({1}, {0})); }

}  // namespace vkg::gemm_tactics
