// Signal ops (opset 17; DFT also 20): the window functions HannWindow, HammingWindow and
// BlackmanWindow, MelWeightMatrix, DFT and STFT. They follow ONNX's reference
// implementation, which made the conformance data; DFT and STFT are computed in double
// as plain sums (exact twiddles from (j * k) mod n), complex values as a trailing axis
// of 2 (real, imaginary).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "runtime/reference/ops/normalization_common.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {
namespace {

// The one value of an optional scalar integer input, or `def` when it is omitted.
int64_t scalar_int(const KernelContext& ctx, size_t index, const char* what, int64_t def) {
  if (!ctx.has_input(index)) return def;
  const std::vector<int64_t> v = int_input(ctx, index, what);
  VKG_CHECK(v.size() == 1, ctx.node.describe() << ": " << what << " must hold one value, got " << v.size());
  return v[0];
}

double scalar_double(const KernelContext& ctx, size_t index, const char* what) {
  const Tensor& t = ctx.input(index);
  VKG_CHECK(t.size() == 1, ctx.node.describe() << ": " << what << " must hold one value, got " << t.describe());
  return t.get_as_double(0);
}

// The element type named by an `output_datatype` attribute (default float32).
DType output_datatype(const KernelContext& ctx) {
  const int64_t onnx_type = ctx.node.attr_int("output_datatype", 1);
  const std::optional<DType> dt = dtype_from_onnx(int32_t(onnx_type));
  VKG_CHECK(dt && *dt != DType::Bool,
            ctx.node.describe() << ": output_datatype " << onnx_type << " is not a supported numeric type");
  return *dt;
}

// Window functions: w[n] = sum_m a_m cos(2 pi m n / N) for n in [0, size), where N is size
// (periodic, the default) or size - 1 (symmetric).
std::vector<Tensor> window(const KernelContext& ctx, const std::vector<double>& coefficients) {
  const int64_t size = scalar_int(ctx, 0, "size", 0);
  VKG_CHECK(size >= 0, ctx.node.describe() << ": size must not be negative, got " << size);
  const bool periodic = ctx.node.attr_int("periodic", 1) != 0;
  const double denominator = double(periodic ? size : size - 1);
  Tensor out(output_datatype(ctx), {size});
  for (int64_t n = 0; n < size; ++n) {
    double w = 0;
    for (size_t m = 0; m < coefficients.size(); ++m)
      w += coefficients[m] * (denominator > 0 ? std::cos(2 * std::numbers::pi * double(m) * double(n) / denominator)
                                              : 1.0);
    out.set_from_double(n, w);
  }
  return {out};
}

std::vector<Tensor> hann_window(const KernelContext& ctx) { return window(ctx, {0.5, -0.5}); }
std::vector<Tensor> hamming_window(const KernelContext& ctx) { return window(ctx, {25.0 / 46.0, -21.0 / 46.0}); }
std::vector<Tensor> blackman_window(const KernelContext& ctx) { return window(ctx, {0.42, -0.5, 0.08}); }

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters, equally spaced
// on the mel scale from lower_edge_hertz to upper_edge_hertz; the filter edges are
// spectrogram bins, floor((dft_length + 1) * hertz / sample_rate), as ONNX's reference.
std::vector<Tensor> mel_weight_matrix(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const int64_t mel_bins = scalar_int(ctx, 0, "num_mel_bins", 0);
  const int64_t dft_length = scalar_int(ctx, 1, "dft_length", 0);
  const int64_t sample_rate = scalar_int(ctx, 2, "sample_rate", 0);
  const double lower = scalar_double(ctx, 3, "lower_edge_hertz");
  const double upper = scalar_double(ctx, 4, "upper_edge_hertz");
  VKG_CHECK(mel_bins > 0 && dft_length > 0 && sample_rate > 0,
            node.describe() << ": num_mel_bins, dft_length and sample_rate must be positive, got " << mel_bins << ", "
                            << dft_length << " and " << sample_rate);
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = mel(lower), step = (mel(upper) - low_mel) / double(mel_bins + 2);
  std::vector<int64_t> edges(size_t(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (double(i) * step + low_mel) / 2595.0) - 1.0);
    edges[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate)));
    VKG_CHECK(edges[size_t(i)] >= 0 && edges[size_t(i)] < spectrogram_bins,
              node.describe() << ": mel band edge " << hz << " Hz falls outside the " << spectrogram_bins
                              << " spectrogram bins (check the edges against sample_rate)");
  }
  std::vector<double> w(size_t(spectrogram_bins * mel_bins), 0.0);
  const auto at = [&](int64_t bin, int64_t mel_bin) -> double& { return w[size_t(bin * mel_bins + mel_bin)]; };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = edges[size_t(i)], center = edges[size_t(i + 1)], right = edges[size_t(i + 2)];
    if (center == left) {
      at(center, i) = 1;
    } else {
      for (int64_t j = left; j <= center; ++j) at(j, i) = double(j - left) / double(center - left);
    }
    for (int64_t j = center; j < right; ++j) at(j, i) = double(right - j) / double(right - center);
  }
  Tensor out(output_datatype(ctx), {spectrogram_bins, mel_bins});
  for (int64_t e = 0; e < out.size(); ++e) out.set_from_double(e, w[size_t(e)]);
  return {out};
}

// One strided DFT: for each of `outer` x `inner` signals of x (complex as (re, im) pairs
// when `complex_in`, reals otherwise), output bins k in [0, bins) of the length-n transform
// of the signal's first `terms` samples (zeros beyond `valid`), each sample times window[j].
struct DftGeometry {
  int64_t outer = 1, inner = 1;  // signals: outer index, inner index
  int64_t frames = 1, step = 0;  // STFT frames along the signal axis (DFT: one frame)
  int64_t signal_length = 0;     // input length of the signal axis
  int64_t n = 0, bins = 0, terms = 0;
  bool complex_in = false, inverse = false;
};

std::vector<double> run_dft(const DftGeometry& g, const std::vector<double>& x, const std::vector<double>* window) {
  std::vector<double> cos_table(size_t(g.n)), sin_table(size_t(g.n));
  for (int64_t m = 0; m < g.n; ++m) {
    cos_table[size_t(m)] = std::cos(2 * std::numbers::pi * double(m) / double(g.n));
    sin_table[size_t(m)] = std::sin(2 * std::numbers::pi * double(m) / double(g.n));
  }
  const int64_t c = g.complex_in ? 2 : 1;
  const double sign = g.inverse ? 1.0 : -1.0, scale = g.inverse ? 1.0 / double(g.n) : 1.0;
  std::vector<double> y(size_t(g.outer * g.frames * g.bins * g.inner * 2));
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t f = 0; f < g.frames; ++f)
      for (int64_t k = 0; k < g.bins; ++k)
        for (int64_t i = 0; i < g.inner; ++i) {
          double re = 0, im = 0;
          for (int64_t j = 0; j < g.terms; ++j) {
            const int64_t pos = f * g.step + j;
            if (pos >= g.signal_length) break;
            const size_t at = size_t(((o * g.signal_length + pos) * g.inner + i) * c);
            const double w = window ? (*window)[size_t(j)] : 1.0;
            const double xr = x[at] * w, xi = g.complex_in ? x[at + 1] * w : 0.0;
            const size_t m = size_t((j * k) % g.n);
            const double cr = cos_table[m], ci = sign * sin_table[m];
            re += xr * cr - xi * ci;
            im += xr * ci + xi * cr;
          }
          const size_t out = size_t((((o * g.frames + f) * g.bins + k) * g.inner + i) * 2);
          y[out] = re * scale;
          y[out + 1] = im * scale;
        }
  return y;
}

// DFT-17 (axis attribute, default 1) and DFT-20 (axis input, default -2): the transform
// along one axis of [..., 1 | 2]; dft_length pads or truncates; onesided keeps
// n / 2 + 1 bins; inverse divides by n.
std::vector<Tensor> dft(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(is_floating(x.dtype()), node.describe() << ": the input must be a float tensor, got " << x.describe());
  VKG_CHECK(x.rank() >= 2 && (x.dim(x.rank() - 1) == 1 || x.dim(x.rank() - 1) == 2),
            node.describe() << ": the input must have rank >= 2 and a last axis of 1 (real) or 2 (complex), got "
                            << x.describe());
  const int64_t rank = x.rank();
  int64_t axis = ctx.opset >= 20 ? scalar_int(ctx, 2, "axis", -2) : node.attr_int("axis", 1);
  VKG_CHECK(axis >= -rank && axis < rank - 1 && axis != -1,
            node.describe() << ": axis " << axis << " must name a signal axis of " << x.describe());
  if (axis < 0) axis += rank;
  DftGeometry g;
  g.signal_length = x.dim(axis);
  g.n = scalar_int(ctx, 1, "dft_length", g.signal_length);
  VKG_CHECK(g.n > 0, node.describe() << ": dft_length must be positive, got " << g.n);
  g.inverse = node.attr_int("inverse", 0) != 0;
  g.bins = node.attr_int("onesided", 0) != 0 ? g.n / 2 + 1 : g.n;
  g.terms = g.n;
  g.complex_in = x.dim(rank - 1) == 2;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) g.inner *= x.dim(d);
  Shape y_shape = x.shape();
  y_shape[size_t(axis)] = g.bins;
  y_shape.back() = 2;
  return {store_doubles(node, x.dtype(), y_shape, run_dft(g, load_doubles(node, x), nullptr))};
}

// STFT-17: signal [batch, length, 1 | 2], frame_step, optional window [window_length],
// optional frame_length (the DFT size) -> [batch, frames, bins, 2] with
// frames = 1 + (length - frame_length) / frame_step; samples past the signal's end read 0.
std::vector<Tensor> stft(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(is_floating(x.dtype()), node.describe() << ": the signal must be a float tensor, got " << x.describe());
  VKG_CHECK(x.rank() == 3 && (x.dim(2) == 1 || x.dim(2) == 2),
            node.describe() << ": the signal must be [batch, length, 1 | 2], got " << x.describe());
  const int64_t step = scalar_int(ctx, 1, "frame_step", 0);
  VKG_CHECK(step > 0, node.describe() << ": frame_step must be positive, got " << step);
  std::vector<double> window;
  if (ctx.has_input(2)) {
    VKG_CHECK(ctx.input(2).rank() == 1,
              node.describe() << ": the window must have rank 1, got " << ctx.input(2).describe());
    window = load_doubles(node, ctx.input(2));
  }
  const int64_t window_length = ctx.has_input(2) ? int64_t(window.size()) : -1;
  const int64_t frame_length = scalar_int(ctx, 3, "frame_length", window_length >= 0 ? window_length : x.dim(1));
  VKG_CHECK(frame_length > 0 && frame_length <= x.dim(1),
            node.describe() << ": frame_length " << frame_length << " must be in [1, " << x.dim(1) << "]");
  DftGeometry g;
  g.outer = x.dim(0);
  g.signal_length = x.dim(1);
  g.step = step;
  g.frames = 1 + (x.dim(1) - frame_length) / step;
  g.n = frame_length;
  g.bins = node.attr_int("onesided", 1) != 0 ? g.n / 2 + 1 : g.n;
  g.terms = window_length >= 0 ? std::min(window_length, g.n) : g.n;
  g.complex_in = x.dim(2) == 2;
  return {store_doubles(node, x.dtype(), {g.outer, g.frames, g.bins, 2},
                        run_dft(g, load_doubles(node, x), ctx.has_input(2) ? &window : nullptr))};
}

}  // namespace

void register_signal_ops(OpRegistry& registry) {
  registry.add("HannWindow", hann_window);
  registry.add("HammingWindow", hamming_window);
  registry.add("BlackmanWindow", blackman_window);
  registry.add("MelWeightMatrix", mel_weight_matrix);
  registry.add("DFT", dft);
  registry.add("STFT", stft);
}

}  // namespace vkg
