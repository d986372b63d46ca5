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

}  // namespace

void register_attention_ops(OpRegistry& registry) { registry.add("RotaryEmbedding", rotary_embedding); }

}  // namespace vkg
