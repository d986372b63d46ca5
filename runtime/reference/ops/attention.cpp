// RotaryEmbedding and Attention (opset 23): the transformer building blocks.
//
// Both read their inputs as doubles and compute in double; the outputs are rounded
// to the dtype of the input they follow.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/reference/ops/normalization_common.h"

namespace vkg {
namespace {

// RotaryEmbedding-23: rotates pairs of elements of each head by the angle of the token's
// position. X is [batch, heads, sequence, head_size] or [batch, sequence, heads * head_size]
// (then num_heads is required). The caches are [max_position, rotary_dim / 2] indexed by
// position_ids [batch, sequence], or [batch, sequence, rotary_dim / 2] without them (a
// longer last axis is cut to rotary_dim / 2). Pairs are (i, i + rotary_dim / 2), or (2i,
// 2i + 1) when interleaved; elements past rotary_dim pass through.
std::vector<Tensor> rotary_embedding(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& cos_cache = ctx.input(1);
  const Tensor& sin_cache = ctx.input(2);
  VKG_CHECK(x.rank() == 3 || x.rank() == 4, node.describe() << ": X must be 3-D or 4-D, got " << x.describe());
  const int64_t batch = x.dim(0);
  int64_t heads = 0, seq = 0, head_size = 0;
  if (x.rank() == 4) {
    heads = x.dim(1);
    seq = x.dim(2);
    head_size = x.dim(3);
  } else {
    heads = node.attr_int("num_heads", 0);
    VKG_CHECK(heads > 0 && x.dim(2) % heads == 0,
              node.describe() << ": a 3-D X needs num_heads > 0 dividing its hidden size " << x.dim(2));
    seq = x.dim(1);
    head_size = x.dim(2) / heads;
  }
  int64_t rot = node.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head_size;
  VKG_CHECK(rot > 0 && rot <= head_size && rot % 2 == 0, node.describe() << ": rotary_embedding_dim " << rot
                                                                         << " must be even and at most the head size "
                                                                         << head_size);
  const int64_t half = rot / 2;
  const bool interleaved = node.attr_int("interleaved", 0) != 0;
  const bool has_pos = ctx.has_input(3);
  std::vector<int64_t> pos;
  if (has_pos) {
    const Tensor& p = ctx.input(3);
    VKG_CHECK(p.shape() == Shape({batch, seq}),
              node.describe() << ": position_ids must be [" << batch << ", " << seq << "], got " << p.describe());
    pos = p.to_int64s();
    VKG_CHECK(cos_cache.rank() == 2 && sin_cache.shape() == cos_cache.shape() && cos_cache.dim(1) >= half,
              node.describe() << ": with position_ids the caches must be [max_position, >= " << half << "], got "
                              << cos_cache.describe() << " and " << sin_cache.describe());
    for (int64_t v : pos)
      VKG_CHECK(v >= 0 && v < cos_cache.dim(0),
                node.describe() << ": position id " << v << " is outside the caches' " << cos_cache.dim(0) << " rows");
  } else {
    VKG_CHECK(cos_cache.rank() == 3 && sin_cache.shape() == cos_cache.shape() && cos_cache.dim(0) == batch &&
                  cos_cache.dim(1) == seq && cos_cache.dim(2) >= half,
              node.describe() << ": without position_ids the caches must be [" << batch << ", " << seq << ", >= "
                              << half << "], got " << cos_cache.describe() << " and " << sin_cache.describe());
  }
  const int64_t cache_row = cos_cache.dim(cos_cache.rank() - 1);
  const std::vector<double> xs = load_doubles(node, x);
  const std::vector<double> cs = load_doubles(node, cos_cache);
  const std::vector<double> ss = load_doubles(node, sin_cache);
  std::vector<double> ys = xs;
  // Element offsets: (b, h, s, d) lives at b * bs + h * hs + s * ss + d.
  const int64_t hs = x.rank() == 4 ? seq * head_size : head_size;
  const int64_t sstride = x.rank() == 4 ? head_size : heads * head_size;
  const int64_t bs = heads * seq * head_size;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t row = has_pos ? pos[size_t(b * seq + s)] : b * seq + s;
      const double* c = cs.data() + row * cache_row;
      const double* sn = ss.data() + row * cache_row;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = b * bs + h * hs + s * sstride;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = base + (interleaved ? 2 * i : i);
          const int64_t i2 = base + (interleaved ? 2 * i + 1 : i + half);
          const double x1 = xs[size_t(i1)], x2 = xs[size_t(i2)];
          ys[size_t(i1)] = c[i] * x1 - sn[i] * x2;
          ys[size_t(i2)] = sn[i] * x1 + c[i] * x2;
        }
      }
    }
  return {store_doubles(node, x.dtype(), x.shape(), ys)};
}

// One of Q, K, V (or a past cache) seen as [batch, heads, seq, head_size]: element
// (b, h, s, d) at b * sb + h * sh + s * ss + d. A 3-D tensor is [batch, seq, heads * head_size].
struct HeadView {
  int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
  int64_t sb = 0, sh = 0, ss = 0;
  int64_t at(int64_t b, int64_t h, int64_t s, int64_t d) const { return b * sb + h * sh + s * ss + d; }
};

// A dense [batch, heads, seq, head_size] view.
HeadView dense_view(int64_t batch, int64_t heads, int64_t seq, int64_t head_size) {
  HeadView v{batch, heads, seq, head_size, 0, 0, head_size};
  v.sh = seq * head_size;
  v.sb = heads * v.sh;
  return v;
}

HeadView head_view(const Node& node, const Tensor& t, int64_t heads_3d, const char* what) {
  if (t.rank() == 4) return dense_view(t.dim(0), t.dim(1), t.dim(2), t.dim(3));
  VKG_CHECK(t.rank() == 3, node.describe() << ": " << what << " must be 3-D or 4-D, got " << t.describe());
  VKG_CHECK(heads_3d > 0 && t.dim(2) % heads_3d == 0,
            node.describe() << ": 3-D " << what << " " << t.describe()
                            << " needs a head count (q_num_heads, kv_num_heads) dividing its hidden size");
  HeadView v{t.dim(0), heads_3d, t.dim(1), t.dim(2) / heads_3d, 0, 0, 0};
  v.sh = v.head_size;
  v.ss = heads_3d * v.head_size;
  v.sb = v.seq * v.ss;
  return v;
}

// The present cache: `past` [batch, heads, past_seq, head_size] (optional) followed along
// the sequence by the current keys or values `cur`, as a dense 4-D tensor.
std::vector<double> present_cache(const KernelContext& ctx, size_t past_input, const Tensor& cur, const HeadView& c,
                                  HeadView& present, const char* what) {
  const Node& node = ctx.node;
  int64_t past_seq = 0;
  std::vector<double> past;
  if (ctx.has_input(past_input)) {
    const Tensor& p = ctx.input(past_input);
    VKG_CHECK(p.rank() == 4 && p.dim(0) == c.batch && p.dim(1) == c.heads && p.dim(3) == c.head_size,
              node.describe() << ": " << what << " must be [" << c.batch << ", " << c.heads << ", past, " << c.head_size
                              << "], got " << p.describe());
    past_seq = p.dim(2);
    past = load_doubles(node, p);
  }
  present = dense_view(c.batch, c.heads, past_seq + c.seq, c.head_size);
  const std::vector<double> values = load_doubles(node, cur);
  std::vector<double> out(size_t(present.batch * present.sb));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t s = 0; s < present.seq; ++s)
        for (int64_t d = 0; d < c.head_size; ++d)
          out[size_t(present.at(b, h, s, d))] = s < past_seq
                                                    ? past[size_t(((b * c.heads + h) * past_seq + s) * c.head_size + d)]
                                                    : values[size_t(c.at(b, h, s - past_seq, d))];
  return out;
}

// Q, K and V seen as heads, checked to agree; 3-D ones split by q_num_heads and kv_num_heads.
struct QkvViews {
  HeadView q, k, v;
};

QkvViews qkv_views(const Node& node, const Tensor& q, const Tensor& k, const Tensor& v) {
  VKG_CHECK(q.rank() == k.rank() && q.rank() == v.rank() && (q.rank() == 3 || q.rank() == 4),
            node.describe() << ": Q, K and V must all be 3-D or all 4-D, got " << q.describe() << ", " << k.describe()
                            << " and " << v.describe());
  const bool three_d = q.rank() == 3;
  const int64_t q_heads_attr = node.attr_int("q_num_heads", 0), kv_heads_attr = node.attr_int("kv_num_heads", 0);
  VKG_CHECK(!three_d || (q_heads_attr > 0 && kv_heads_attr > 0),
            node.describe() << ": 3-D inputs need q_num_heads and kv_num_heads");
  const HeadView qv = head_view(node, q, q_heads_attr, "Q");
  const HeadView kv = head_view(node, k, kv_heads_attr, "K");
  const HeadView vv = head_view(node, v, kv_heads_attr, "V");
  VKG_CHECK(kv.batch == qv.batch && vv.batch == qv.batch && kv.heads == vv.heads && kv.seq == vv.seq &&
                kv.head_size == qv.head_size,
            node.describe() << ": Q " << q.describe() << ", K " << k.describe() << " and V " << v.describe()
                            << " do not agree in batch, heads, sequence or head size");
  VKG_CHECK(qv.heads % kv.heads == 0,
            node.describe() << ": Q's " << qv.heads << " heads are not a multiple of K and V's " << kv.heads);
  return {qv, kv, vv};
}

// The attributes that shape the scores, checked.
struct ScoreOptions {
  int64_t mode = 0;  // qk_matmul_output_mode
  bool causal = false;
  double softcap = 0;
  double scale = 0;
};

ScoreOptions score_options(const Node& node, int64_t head_size) {
  const int64_t softmax_precision = node.attr_int("softmax_precision", 1);
  VKG_CHECK(softmax_precision == 1 || softmax_precision == 10 || softmax_precision == 11 || softmax_precision == 16,
            node.describe() << ": softmax_precision " << softmax_precision
                            << " is not a float type (1 float, 10 float16, 11 double, 16 bfloat16)");
  ScoreOptions options;
  options.mode = node.attr_int("qk_matmul_output_mode", 0);
  VKG_CHECK(options.mode >= 0 && options.mode <= 3,
            node.describe() << ": qk_matmul_output_mode " << options.mode << " is not 0, 1, 2 or 3");
  options.causal = node.attr_int("is_causal", 0) != 0;
  options.softcap = node.attr_float("softcap", 0.0f);
  options.scale = node.has_attr("scale") ? double(node.attr_float("scale", 0.0f)) : 1.0 / std::sqrt(double(head_size));
  return options;
}

// The bias [batch, heads, q_seq, total]: the mask broadcast, -inf where masked out.
std::vector<double> attention_bias(const KernelContext& ctx, const Shape& bias_shape, bool causal) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> bias(size_t(num_elements(bias_shape)), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& m = ctx.input(3);
    Tensor mask = m;
    if (m.dtype() == DType::Bool) {
      mask = Tensor(DType::Float32, m.shape());
      for (int64_t i = 0; i < m.size(); ++i) mask.set_from_double(i, m.data<bool>()[i] ? 0.0 : -inf);
    }
    bias = broadcast_doubles(ctx.node, mask, bias_shape, "attn_mask");
  }
  const int64_t qs = bias_shape[2], total = bias_shape[3];
  if (causal)
    for (int64_t r = 0; r < bias_shape[0] * bias_shape[1] * qs; ++r)
      for (int64_t j = r % qs + 1; j < total; ++j) bias[size_t(r * total + j)] = -inf;
  return bias;
}

// Q and the present keys and values with their views; the keys and values are also outputs.
struct AttentionOperands {
  const std::vector<double>& q;
  const HeadView& qv;
  const std::vector<double>& keys;
  const HeadView& pk;
  const std::vector<double>& values;
  const HeadView& pv;
};

// Y [batch, heads, q_seq, dv]: each query's softmax-weighted sum of the values. Fills qk
// (shaped like the bias) with the scores at the stage qk_matmul_output_mode names.
std::vector<double> attend(const AttentionOperands& in, const std::vector<double>& bias, const ScoreOptions& options,
                           std::vector<double>& qk) {
  const HeadView& qv = in.qv;
  const HeadView& pk = in.pk;
  const HeadView& pv = in.pv;
  const int64_t total = pk.seq, batch = qv.batch, heads = qv.heads, qs = qv.seq, dv = pv.head_size;
  const int64_t mode = options.mode;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> y(size_t(batch * heads * qs * dv), 0.0);  // [batch, heads, q_seq, dv]
  std::vector<double> row(static_cast<size_t>(total));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kh = h / (heads / pk.heads);  // query heads share K/V heads in consecutive groups
      for (int64_t i = 0; i < qs; ++i) {
        const int64_t r = (b * heads + h) * qs + i;
        double* qk_row = qk.data() + r * total;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < qv.head_size; ++d)
            dot += in.q[size_t(qv.at(b, h, i, d))] * in.keys[size_t(pk.at(b, kh, j, d))];
          double s = options.scale * dot;
          if (mode == 0) qk_row[j] = s;
          s += bias[size_t(r * total + j)];
          if (mode == 1) qk_row[j] = s;
          if (options.softcap > 0) s = std::tanh(s / options.softcap) * options.softcap;
          if (mode == 2) qk_row[j] = s;
          row[size_t(j)] = s;
        }
        double max = -inf, sum = 0;
        for (double s : row) max = std::max(max, s);
        for (double& s : row) sum += (s = std::exp(s - max));
        for (double& s : row) s /= sum;
        if (mode == 3) std::copy(row.begin(), row.end(), qk_row);
        double* out = y.data() + r * dv;
        for (int64_t j = 0; j < total; ++j)
          for (int64_t d = 0; d < dv; ++d) out[d] += row[size_t(j)] * in.values[size_t(pv.at(b, kh, j, d))];
      }
    }
  return y;
}

// Y [batch, heads, q_seq, dv] back to [batch, q_seq, heads * dv], the layout of 3-D inputs.
std::vector<double> heads_last(const std::vector<double>& y, int64_t batch, int64_t heads, int64_t qs, int64_t dv) {
  std::vector<double> t(y.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < qs; ++i)
        for (int64_t d = 0; d < dv; ++d)
          t[size_t(((b * qs + i) * heads + h) * dv + d)] = y[size_t(((b * heads + h) * qs + i) * dv + d)];
  return t;
}

// Attention-23: Y = softmax(softcap(scale * Q K^T + bias)) V per head, where the bias holds
// attn_mask (added, or -inf where a bool mask is false) and, with is_causal, -inf above the
// diagonal (query i sees keys j <= i, counted from the first past key). Q has q_num_heads
// heads, K and V kv_num_heads: query heads share a K/V head in consecutive groups (head h
// reads head h / (q_num_heads / kv_num_heads): PyTorch's repeat_interleave, as ONNX Runtime
// and onnx/onnx#7274; ONNX 1.18's reference tiles instead). 3-D inputs are [batch, seq,
// heads * head_size] (transposed to heads first, as the spec says and ONNX Runtime does;
// ONNX 1.18's reference only reshapes, onnx/onnx#7118). Past keys and values come before this step's;
// the present ones are returned. qk_matmul_output is, by qk_matmul_output_mode, the scaled
// product (0), plus the bias (1), after softcap (2) or after softmax (3). Computed in
// double whatever softmax_precision asks (it only names a precision at least as coarse).
std::vector<Tensor> attention(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const bool three_d = q.rank() == 3;
  const QkvViews views = qkv_views(node, q, k, v);
  const HeadView& qv = views.q;
  const ScoreOptions options = score_options(node, qv.head_size);

  HeadView pk, pv;
  const std::vector<double> keys = present_cache(ctx, 4, k, views.k, pk, "past_key");
  const std::vector<double> values = present_cache(ctx, 5, v, views.v, pv, "past_value");
  const int64_t total = pk.seq, batch = qv.batch, heads = qv.heads, qs = qv.seq, dv = views.v.head_size;

  const Shape bias_shape = {batch, heads, qs, total};
  const std::vector<double> bias = attention_bias(ctx, bias_shape, options.causal);

  const std::vector<double> qd = load_doubles(node, q);
  std::vector<double> qk(size_t(num_elements(bias_shape)), 0.0);
  std::vector<double> y = attend({qd, qv, keys, pk, values, pv}, bias, options, qk);
  Shape y_shape = {batch, heads, qs, dv};
  if (three_d) {
    y = heads_last(y, batch, heads, qs, dv);
    y_shape = {batch, qs, heads * dv};
  }
  return {store_doubles(node, q.dtype(), y_shape, y),
          store_doubles(node, k.dtype(), {pk.batch, pk.heads, pk.seq, pk.head_size}, keys),
          store_doubles(node, v.dtype(), {pv.batch, pv.heads, pv.seq, pv.head_size}, values),
          store_doubles(node, q.dtype(), bias_shape, qk)};
}

}  // namespace

void register_attention_ops(OpRegistry& registry) {
  registry.add("RotaryEmbedding", rotary_embedding);
  registry.add("Attention", attention);
}

}  // namespace vkg
