// Object-detection ops: NonMaxSuppression (opsets 10, 11) and RoiAlign (opsets 10, 16,
// 22). They follow ONNX's reference implementation (itself ONNX Runtime's), which made the
// conformance data: NonMaxSuppression compares boxes in float32, RoiAlign samples
// bilinearly on a grid of sampling_ratio (or ceil(bin size)) points per bin, its "max"
// mode taking the largest weighted corner value of any sample.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/core/roi_align_params.h"
#include "runtime/reference/ops/normalization_common.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {
namespace {

// A box as its extent along y and x, whatever the corner order or center form.
struct Box {
  float y_min = 0, x_min = 0, y_max = 0, x_max = 0;
};

Box read_box(const std::vector<double>& boxes, int64_t at, bool center_point) {
  const auto v = [&](int64_t i) { return float(boxes[size_t(at + i)]); };
  if (center_point) {  // [x_center, y_center, width, height]
    const float half_w = v(2) / 2, half_h = v(3) / 2;
    return {v(1) - half_h, v(0) - half_w, v(1) + half_h, v(0) + half_w};
  }
  // [y1, x1, y2, x2], either diagonal
  return {std::min(v(0), v(2)), std::min(v(1), v(3)), std::max(v(0), v(2)), std::max(v(1), v(3))};
}

bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float x_min = std::max(a.x_min, b.x_min), x_max = std::min(a.x_max, b.x_max);
  if (x_max <= x_min) return false;
  const float y_min = std::max(a.y_min, b.y_min), y_max = std::min(a.y_max, b.y_max);
  if (y_max <= y_min) return false;
  const float intersection = (x_max - x_min) * (y_max - y_min);
  if (intersection <= 0) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// NonMaxSuppression: boxes [B, N, 4], scores [B, C, N] -> selected_indices [count, 3] of
// (batch, class, box), greedily per batch and class in descending score order (ties: the
// lower box index first), keeping boxes above score_threshold (when given) whose IoU with
// every box kept before is at most iou_threshold, at most max_output_boxes_per_class each.
std::vector<Tensor> non_max_suppression(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  VKG_CHECK(boxes.rank() == 3 && boxes.dim(2) == 4 && scores.rank() == 3 && scores.dim(0) == boxes.dim(0) &&
                scores.dim(2) == boxes.dim(1),
            node.describe() << ": boxes must be [batch, boxes, 4] and scores [batch, classes, boxes], got "
                            << boxes.describe() << " and " << scores.describe());
  int64_t max_per_class = 0;
  if (ctx.has_input(2) && ctx.input(2).size() > 0) {
    const std::vector<int64_t> v = int_input(ctx, 2, "max_output_boxes_per_class");
    max_per_class = std::max<int64_t>(v[0], 0);
  }
  float iou_threshold = 0;
  if (ctx.has_input(3) && ctx.input(3).size() > 0) iou_threshold = float(ctx.input(3).get_as_double(0));
  const bool has_score_threshold = ctx.has_input(4) && ctx.input(4).size() > 0;
  const float score_threshold = has_score_threshold ? float(ctx.input(4).get_as_double(0)) : 0.0f;
  const int64_t center_point = node.attr_int("center_point_box", 0);
  VKG_CHECK(center_point == 0 || center_point == 1, node.describe()
                                                        << ": center_point_box must be 0 or 1, got " << center_point);
  const std::vector<double> box_values = load_doubles(node, boxes);
  const std::vector<double> score_values = load_doubles(node, scores);
  const int64_t batches = boxes.dim(0), count = boxes.dim(1), classes = scores.dim(1);
  std::vector<int64_t> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = score_values.data() + (b * classes + c) * count;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < count; ++i)
        if (!has_score_threshold || float(s[i]) > score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return float(s[l]) > float(s[r]); });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_per_class) break;
        const Box box = read_box(box_values, (b * count + i) * 4, center_point == 1);
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return suppresses(box, k, iou_threshold); }))
          continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  return {Tensor::from_vector<int64_t>({int64_t(selected.size() / 3), 3}, selected)};
}

// One bilinear sample: the offsets of its four corners in a plane and their weights (all
// zero for a sample outside the map).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear_sample(double y, double xx, int64_t height, int64_t width) {
  Sample s;
  if (y >= -1.0 && y <= double(height) && xx >= -1.0 && xx <= double(width)) {
    double yc = std::max(y, 0.0), xc = std::max(xx, 0.0);
    int64_t y_low = int64_t(yc), x_low = int64_t(xc), y_high = 0, x_high = 0;
    if (y_low >= height - 1) {
      y_high = y_low = height - 1;
      yc = double(y_low);
    } else {
      y_high = y_low + 1;
    }
    if (x_low >= width - 1) {
      x_high = x_low = width - 1;
      xc = double(x_low);
    } else {
      x_high = x_low + 1;
    }
    const double ly = yc - double(y_low), lx = xc - double(x_low), hy = 1 - ly, hx = 1 - lx;
    s = {{y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high},
         {hy * hx, hy * lx, ly * hx, ly * lx}};
  }
  return s;
}

// Where one roi lies on the feature map and how its bins are sampled.
struct RoiGrid {
  double start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;  // samples per bin along y and x
  double samples = 1;              // samples per bin, at least 1
};

RoiGrid roi_grid(const std::vector<double>& rs, int64_t r, const RoiAlignParams& params) {
  const bool half_pixel = params.half_pixel;
  const int64_t out_h = params.output_height, out_w = params.output_width;
  const int64_t sampling_ratio = params.sampling_ratio;
  const double spatial_scale = params.spatial_scale;
  RoiGrid g;
  const double offset = half_pixel ? 0.5 : 0.0;
  g.start_w = rs[size_t(r * 4)] * spatial_scale - offset;
  g.start_h = rs[size_t(r * 4 + 1)] * spatial_scale - offset;
  double roi_w = rs[size_t(r * 4 + 2)] * spatial_scale - offset - g.start_w;
  double roi_h = rs[size_t(r * 4 + 3)] * spatial_scale - offset - g.start_h;
  if (!half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
  g.bin_h = roi_h / double(out_h), g.bin_w = roi_w / double(out_w);
  g.grid_h = sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(roi_h / double(out_h)));
  g.grid_w = sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(roi_w / double(out_w)));
  g.samples = double(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  return g;
}

// The samples of output bin (ph, pw), row by row.
std::vector<Sample> bin_taps(const RoiGrid& g, int64_t ph, int64_t pw, int64_t height, int64_t width) {
  std::vector<Sample> taps;
  for (int64_t iy = 0; iy < g.grid_h; ++iy) {
    double y = g.start_h + double(ph) * g.bin_h + (double(iy) + 0.5) * g.bin_h / double(g.grid_h);
    for (int64_t ix = 0; ix < g.grid_w; ++ix) {
      double xx = g.start_w + double(pw) * g.bin_w + (double(ix) + 0.5) * g.bin_w / double(g.grid_w);
      taps.push_back(bilinear_sample(y, xx, height, width));
    }
  }
  return taps;
}

// One bin's value in one channel plane: the mean of its samples, or in max mode the
// largest weighted corner value of any sample.
double pool_bin(const std::vector<Sample>& taps, const double* plane, bool max_mode, double samples) {
  double value = 0;
  if (!max_mode) {
    for (const Sample& s : taps)
      for (int q = 0; q < 4; ++q) value += s.w[q] * plane[s.pos[q]];
    value /= samples;
  } else {
    for (size_t t = 0; t < taps.size(); ++t) {
      const Sample& s = taps[t];
      double v = s.w[0] * plane[s.pos[0]];
      for (int q = 1; q < 4; ++q) v = std::max(v, s.w[q] * plane[s.pos[q]]);
      value = t == 0 ? v : std::max(value, v);
    }
  }
  return value;
}

// RoiAlign: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] ->
// Y [R, C, output_height, output_width]. Opset 10 maps coordinates as
// "output_half_pixel" (no offset, rois at least 1 wide); 16 adds "half_pixel" (the default).
std::vector<Tensor> roi_align(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& batch_indices = ctx.input(2);
  VKG_CHECK(x.rank() == 4, node.describe() << ": X must be [N, C, H, W], got " << x.describe());
  VKG_CHECK(rois.rank() == 2 && rois.dim(1) == 4 && batch_indices.rank() == 1 && batch_indices.dim(0) == rois.dim(0),
            node.describe() << ": rois must be [R, 4] and batch_indices [R], got " << rois.describe() << " and "
                            << batch_indices.describe());
  const RoiAlignParams params = roi_align_params(node, ctx.opset);
  const int64_t out_h = params.output_height, out_w = params.output_width;
  const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3), count = rois.dim(0);
  const std::vector<double> xs = load_doubles(node, x);
  const std::vector<double> rs = load_doubles(node, rois);
  for (double v : rs) VKG_CHECK(std::isfinite(v), node.describe() << ": rois must be finite, got " << v);
  const std::vector<int64_t> batches = int_input(ctx, 2, "batch_indices");
  std::vector<double> ys(size_t(count * channels * out_h * out_w));
  for (int64_t r = 0; r < count; ++r) {
    const int64_t batch = batches[size_t(r)];
    VKG_CHECK(batch >= 0 && batch < x.dim(0), node.describe() << ": batch index " << batch << " of roi " << r
                                                              << " is out of range [0, " << x.dim(0) << ")");
    const RoiGrid grid = roi_grid(rs, r, params);
    for (int64_t ph = 0; ph < out_h; ++ph)
      for (int64_t pw = 0; pw < out_w; ++pw) {
        const std::vector<Sample> taps = bin_taps(grid, ph, pw, height, width);
        for (int64_t c = 0; c < channels; ++c) {
          const double* plane = xs.data() + (batch * channels + c) * height * width;
          ys[size_t(((r * channels + c) * out_h + ph) * out_w + pw)] = pool_bin(taps, plane, params.max, grid.samples);
        }
      }
  }
  return {store_doubles(node, x.dtype(), {count, channels, out_h, out_w}, ys)};
}

}  // namespace

void register_detection_ops(OpRegistry& registry) {
  registry.add("NonMaxSuppression", non_max_suppression);
  registry.add("RoiAlign", roi_align);
}

}  // namespace vkg
