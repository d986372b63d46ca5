// vkgraphy-variants: f32 f16acc32
// RoiAlign: one invocation per element of Y [R, C, out_h, out_w]. Its ROI's geometry is
// read at run time (rois and batch_indices are data): the bin is sampled on a grid of
// sampling_ratio (or ceil(bin size)) points per axis, each point bilinear between its four
// neighbours (points beyond [-1, size] count as zero, clamped into X otherwise);
// average mode sums the samples over the grid size, max mode keeps the largest weighted
// corner value of any sample (ONNX's reference; runtime/reference/ops/detection.cpp).
// Coordinates are fp32; the sum is fp32. A batch index outside [0, N) is clamped (the
// reference backend reports it).
// Bindings: 0 = X [N, C, H, W], 1 = rois [R, 4] (x1, y1, x2, y2), 2 = batch_indices [R]
// (int32), 3 = Y.
// Push constants: total (Y elements), channels, height, width, out_h, out_w,
// sampling_ratio, spatial_scale (float bits), batches (N).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kMax               1: max mode; 0: average
//   2 kHalfPixel         1: half_pixel coordinates (offset 0.5); 0: output_half_pixel
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMax = 0;
layout(constant_id = 2) const uint kHalfPixel = 1;

layout(push_constant) uniform Params {
  uint total;
  uint channels;
  uint height;
  uint width;
  uint out_h;
  uint out_w;
  uint sampling_ratio;
  uint spatial_scale;
  uint batches;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer Rois { sfp rois[]; };
layout(binding = 2) readonly buffer Batch { int batch_indices[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

float value_at(uint plane, int pos) { return float(sfp2afp(x[plane + uint(pos)])); }

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint pw = e % p.out_w;
  const uint ph = (e / p.out_w) % p.out_h;
  const uint c = (e / (p.out_w * p.out_h)) % p.channels;
  const uint r = e / (p.out_w * p.out_h * p.channels);
  const int batch = clamp(batch_indices[r], 0, int(p.batches) - 1);
  const uint plane = (uint(batch) * p.channels + c) * p.height * p.width;

  const float scale = uintBitsToFloat(p.spatial_scale);
  const float offset = kHalfPixel != 0 ? 0.5 : 0.0;
  const float start_w = float(sfp2afp(rois[4 * r])) * scale - offset;
  const float start_h = float(sfp2afp(rois[4 * r + 1])) * scale - offset;
  float roi_w = float(sfp2afp(rois[4 * r + 2])) * scale - offset - start_w;
  float roi_h = float(sfp2afp(rois[4 * r + 3])) * scale - offset - start_h;
  if (kHalfPixel == 0) {
    roi_w = max(roi_w, 1.0);
    roi_h = max(roi_h, 1.0);
  }
  const float bin_h = roi_h / float(p.out_h), bin_w = roi_w / float(p.out_w);
  const int grid_h = p.sampling_ratio > 0 ? int(p.sampling_ratio) : int(ceil(roi_h / float(p.out_h)));
  const int grid_w = p.sampling_ratio > 0 ? int(p.sampling_ratio) : int(ceil(roi_w / float(p.out_w)));
  const int h = int(p.height), w = int(p.width);

  float acc = 0.0;
  bool first = true;
  for (int iy = 0; iy < grid_h; ++iy) {
    float yy = start_h + float(ph) * bin_h + (float(iy) + 0.5) * bin_h / float(grid_h);
    for (int ix = 0; ix < grid_w; ++ix) {
      float xx = start_w + float(pw) * bin_w + (float(ix) + 0.5) * bin_w / float(grid_w);
      vec4 weights = vec4(0.0);
      ivec4 pos = ivec4(0);
      if (yy >= -1.0 && yy <= float(h) && xx >= -1.0 && xx <= float(w)) {
        float yc = max(yy, 0.0), xc = max(xx, 0.0);
        int y_low = int(yc), x_low = int(xc), y_high, x_high;
        if (y_low >= h - 1) {
          y_high = y_low = h - 1;
          yc = float(y_low);
        } else {
          y_high = y_low + 1;
        }
        if (x_low >= w - 1) {
          x_high = x_low = w - 1;
          xc = float(x_low);
        } else {
          x_high = x_low + 1;
        }
        const float ly = yc - float(y_low), lx = xc - float(x_low), hy = 1.0 - ly, hx = 1.0 - lx;
        weights = vec4(hy * hx, hy * lx, ly * hx, ly * lx);
        pos = ivec4(y_low * w + x_low, y_low * w + x_high, y_high * w + x_low, y_high * w + x_high);
      }
      const vec4 v = weights * vec4(value_at(plane, pos.x), value_at(plane, pos.y), value_at(plane, pos.z),
                                    value_at(plane, pos.w));
      if (kMax != 0) {
        const float m = max(max(v.x, v.y), max(v.z, v.w));
        acc = first ? m : max(acc, m);
        first = false;
      } else {
        acc += v.x + v.y + v.z + v.w;
      }
    }
  }
  if (kMax == 0) acc /= float(max(grid_h * grid_w, 1));
  y[e] = afp2sfp(afp(acc));
}
