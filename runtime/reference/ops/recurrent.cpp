// RNN, GRU and LSTM (opsets 7 to 22; `layout` from 14): forward, reverse and
// bidirectional, optional biases, initial states, peepholes and sequence lengths, clip,
// LSTM's input_forget and GRU's linear_before_reset, the default and every named
// activation. Computed in double, one batch element and direction at a time.
#include <cmath>

#include "runtime/core/recurrence.h"
#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/normalization_common.h"

namespace vkg {

namespace {

using Cell = RecurrentCell;

// A recurrent node's tensors as doubles, with its layout.
struct Recurrence : RecurrentLayout {
  std::vector<double> x, w, r, b, h0, c0, p;
  std::vector<int64_t> lengths;

  // Element offsets of the layout-dependent tensors.
  size_t x_at(int64_t t, int64_t n) const { return size_t(batch_first ? n * seq + t : t * batch + n) * size_t(input); }
  size_t y_at(int64_t t, int64_t d, int64_t n) const {
    return size_t(batch_first ? (n * seq + t) * directions + d : (t * directions + d) * batch + n) * size_t(hidden);
  }
  size_t state_at(int64_t d, int64_t n) const {
    return size_t(batch_first ? n * directions + d : d * batch + n) * size_t(hidden);
  }
  // Whether direction d runs from the last step to the first.
  bool backwards(int64_t d) const { return reverse || d == 1; }
  double clipped(double v) const { return clip > 0 ? std::max(-double(clip), std::min(double(clip), v)) : v; }
};

std::vector<double> doubles_of(const KernelContext& ctx, size_t i, size_t expected, const char* what) {
  if (!ctx.has_input(i)) return std::vector<double>(expected, 0.0);
  const Tensor& t = ctx.input(i);
  VKG_CHECK(size_t(t.size()) == expected, ctx.node.describe()
                                              << ": " << what << " has shape " << shape_to_string(t.shape())
                                              << ", expected " << expected << " elements");
  return t.to_doubles();
}

Recurrence read_recurrence(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Recurrence rc;
  static_cast<RecurrentLayout&>(rc) = recurrent_layout(node, ctx.opset, x.shape(), w.shape());
  const auto gh = size_t(rc.gates) * size_t(rc.hidden), dirs = size_t(rc.directions);
  const auto states = dirs * size_t(rc.batch) * size_t(rc.hidden);
  rc.x = x.to_doubles();
  rc.w = w.to_doubles();
  rc.r = doubles_of(ctx, 2, dirs * gh * size_t(rc.hidden), "R");
  rc.b = doubles_of(ctx, 3, dirs * 2 * gh, "B");
  rc.h0 = doubles_of(ctx, 5, states, "initial_h");
  if (rc.cell == Cell::Lstm) {
    rc.c0 = doubles_of(ctx, 6, states, "initial_c");
    rc.p = doubles_of(ctx, 7, dirs * 3 * size_t(rc.hidden), "P");
  }
  rc.lengths.assign(size_t(rc.batch), rc.seq);
  if (ctx.has_input(4)) {
    const Tensor& lens = ctx.input(4);
    VKG_CHECK(lens.size() == rc.batch && is_integer(lens.dtype()),
              node.describe() << ": sequence_lens must hold one integer per batch element, got " << lens.describe());
    rc.lengths = lens.to_int64s();
    for (int64_t l : rc.lengths)
      VKG_CHECK(l >= 0 && l <= rc.seq, node.describe()
                                           << ": sequence length " << l << " is outside [0, " << rc.seq << "]");
  }
  return rc;
}

// Runs one direction of one batch element, writing Y and the final states.
void run_sequence(const Recurrence& rc, const std::vector<RecurrentActivation>& act, int64_t d, int64_t n,
                  std::vector<double>& y, std::vector<double>& y_h, std::vector<double>& y_c) {
  const auto H = size_t(rc.hidden), I = size_t(rc.input), G = size_t(rc.gates);
  const double* W = rc.w.data() + size_t(d) * G * H * I;
  const double* R = rc.r.data() + size_t(d) * G * H * H;
  const double* Wb = rc.b.data() + size_t(d) * 2 * G * H;
  const double* Rb = Wb + G * H;
  const double* P = rc.cell == Cell::Lstm ? rc.p.data() + size_t(d) * 3 * H : nullptr;
  const auto state = ptrdiff_t(rc.state_at(d, n));
  std::vector<double> h(rc.h0.begin() + state, rc.h0.begin() + state + ptrdiff_t(H));
  std::vector<double> c(H, 0.0);
  if (rc.cell == Cell::Lstm) c.assign(rc.c0.begin() + state, rc.c0.begin() + state + ptrdiff_t(H));
  std::vector<double> wx(G * H), rh(G * H), next(H);
  const int64_t len = rc.lengths[size_t(n)];
  for (int64_t s = 0; s < len; ++s) {
    const int64_t t = rc.backwards(d) ? len - 1 - s : s;
    const double* xt = rc.x.data() + rc.x_at(t, n);
    for (size_t g = 0; g < G * H; ++g) {
      double a = Wb[g], b = Rb[g];
      for (size_t i = 0; i < I; ++i) a += W[g * I + i] * xt[i];
      for (size_t k = 0; k < H; ++k) b += R[g * H + k] * h[k];
      wx[g] = a;
      rh[g] = b;
    }
    switch (rc.cell) {
      case Cell::Rnn:
        for (size_t k = 0; k < H; ++k) next[k] = act[0](rc.clipped(wx[k] + rh[k]));
        break;
      case Cell::Gru: {
        // Gates z, r, h. The candidate reads r * h through R_h, or (linear_before_reset)
        // r times R_h h.
        std::vector<double> r(H), rhh(H);
        for (size_t k = 0; k < H; ++k) {
          r[k] = act[0](rc.clipped(wx[H + k] + rh[H + k]));
          rhh[k] = r[k] * h[k];
        }
        for (size_t k = 0; k < H; ++k) {
          const double z = act[0](rc.clipped(wx[k] + rh[k]));
          double pre = wx[2 * H + k];
          if (rc.linear_before_reset) {
            pre += r[k] * rh[2 * H + k];
          } else {
            double sum = Rb[2 * H + k];
            for (size_t j = 0; j < H; ++j) sum += R[(2 * H + k) * H + j] * rhh[j];
            pre += sum;
          }
          const double cand = act[1](rc.clipped(pre));
          next[k] = (1 - z) * cand + z * h[k];
        }
        break;
      }
      case Cell::Lstm:
        // Gates i, o, f, c; peepholes P = [Pi, Po, Pf].
        for (size_t k = 0; k < H; ++k) {
          const double i = act[0](rc.clipped(wx[k] + rh[k] + P[k] * c[k]));
          const double f =
              rc.input_forget ? 1 - i : act[0](rc.clipped(wx[2 * H + k] + rh[2 * H + k] + P[2 * H + k] * c[k]));
          const double cand = act[1](rc.clipped(wx[3 * H + k] + rh[3 * H + k]));
          c[k] = f * c[k] + i * cand;
          const double o = act[0](rc.clipped(wx[H + k] + rh[H + k] + P[H + k] * c[k]));
          next[k] = o * act[2](c[k]);
        }
        break;
    }
    h = next;
    std::copy(h.begin(), h.end(), y.begin() + ptrdiff_t(rc.y_at(t, d, n)));
  }
  std::copy(h.begin(), h.end(), y_h.begin() + state);
  std::copy(c.begin(), c.end(), y_c.begin() + state);
}

std::vector<Tensor> recurrent_kernel(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Recurrence rc = read_recurrence(ctx);
  const auto act = recurrent_activations(node, rc.directions);
  const auto H = size_t(rc.hidden);
  std::vector<double> y(size_t(rc.seq * rc.directions * rc.batch) * H, 0.0);
  std::vector<double> y_h(size_t(rc.directions * rc.batch) * H, 0.0), y_c = y_h;
  for (int64_t d = 0; d < rc.directions; ++d)
    for (int64_t n = 0; n < rc.batch; ++n) run_sequence(rc, act[size_t(d)], d, n, y, y_h, y_c);
  const DType dtype = ctx.input(0).dtype();
  const Shape y_shape = rc.batch_first ? Shape{rc.batch, rc.seq, rc.directions, rc.hidden}
                                       : Shape{rc.seq, rc.directions, rc.batch, rc.hidden};
  const Shape state_shape =
      rc.batch_first ? Shape{rc.batch, rc.directions, rc.hidden} : Shape{rc.directions, rc.batch, rc.hidden};
  std::vector<Tensor> outs = {store_doubles(node, dtype, y_shape, y), store_doubles(node, dtype, state_shape, y_h)};
  if (rc.cell == Cell::Lstm) outs.push_back(store_doubles(node, dtype, state_shape, y_c));
  return outs;
}

}  // namespace

void register_recurrent_ops(OpRegistry& registry) {
  registry.add("RNN", recurrent_kernel);
  registry.add("GRU", recurrent_kernel);
  registry.add("LSTM", recurrent_kernel);
}

}  // namespace vkg
