// What the conv family's planners share (conv.cpp registers them; each
// conv_*.cpp holds one form): the geometry of a Conv-like layer, packed-weight
// helpers, the 3-D window of the shaders' push constants, the dispatch and
// limit checks every form makes, and the two GEMM dispatches that the Winograd
// and ConvTranspose forms reuse from conv_gemm.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/window_geometry.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_common.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::conv_tactics {

// Largest scratch buffer (im2col columns, Winograd tiles) a tactic asks for.
inline constexpr uint64_t kMaxScratchBytes = uint64_t(64) << 20;
// Output positions per invocation along the last spatial dim (direct, depthwise, integer).
inline constexpr uint32_t kPixels = 4;

// The geometry of a Conv-like layer. For ConvTranspose the window maps the
// other way: output o gathers input (o + pads_begin - k * dilation) / stride.
struct ConvShape {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  WindowGeometry window;  // in, kernel, out, strides, dilations, pads_begin (spatial dims)

  int64_t cg() const { return in_channels / group; }   // input channels per group
  int64_t mg() const { return out_channels / group; }  // output channels per group
  size_t rank() const { return window.in.size(); }
  int64_t kernel_size() const { return num_elements(window.kernel); }
  int64_t in_size() const { return num_elements(window.in); }
  int64_t out_size() const { return num_elements(window.out); }
};

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Conv, ConvInteger, QLinearConv: X is input x_index, W input w_index.
ConvShape conv_shape(const LayerContext& ctx, size_t x_index, size_t w_index);
// ConvTranspose: output size and pads along every spatial dim (output_shape, when
// given, fixes the size and the pads follow).
ConvShape conv_transpose_shape(const LayerContext& ctx);
void check_output(const LayerContext& ctx, const ConvShape& s);

bool fits_scratch(const LayerContext& ctx, uint64_t bytes, const char* what, std::string& why_not);

// A packed weight in storage form: float32 or float16 values (never empty).
Tensor float_weight(std::vector<float> values, StorageType s);
Tensor int_weight(std::vector<int32_t> values);
std::vector<float> float_values(const Tensor& t);
std::vector<int32_t> int_values(const Tensor& t);

// The binding of optional input `index` (a bias or zero point) and whether it is
// present; an absent one binds a one-element zero weight, as every binding must exist.
std::pair<BindingRef, bool> bind_optional(const LayerContext& ctx, LayerPlan& plan, std::optional<size_t> index,
                                          StorageType s);

// Weights of a Conv (ONNX [M][cg][K]) or ConvTranspose ([C][mg][K]) as
// [group][blocks][cg][K][block]: `block` output channels of a group side by
// side (vec4 loads), zero past mg.
template <class T>
std::vector<T> pack_channel_blocks(const std::vector<T>& w, const ConvShape& s, bool transpose, int64_t block) {
  const int64_t cg = s.cg(), mg = s.mg(), k = s.kernel_size(), blocks = (mg + block - 1) / block;
  std::vector<T> out(size_t(s.group * blocks * cg * k * block), T(0));
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t kk = 0; kk < k; ++kk) {
          const int64_t src = transpose ? ((g * cg + ci) * mg + m) * k + kk : ((g * mg + m) * cg + ci) * k + kk;
          out[size_t((((g * blocks + m / block) * cg + ci) * k + kk) * block + m % block)] = w[size_t(src)];
        }
  return out;
}

// The 3-D form of a window of 1 to 3 spatial dims (size-1 leading dims).
struct Window3 {
  std::array<uint32_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int32_t, 3> strides{1, 1, 1}, dilations{1, 1, 1}, pads{0, 0, 0};
};

Window3 window3(const WindowGeometry& g);

inline uint32_t word(int32_t v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Appends the 18 geometry words in, out, kernel, strides, dilations, pads.
void push_window(std::vector<uint32_t>& push, const Window3& w);

// One dispatch of `invocations` in workgroups of kLocalSize (specialization constant 0), `spec` after it.
Dispatch dispatch(const LayerContext& ctx, std::string shader, std::vector<SpecValue> spec,
                  std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t invocations);

bool fits_invocations(uint64_t invocations, std::string& why_not);
bool within_3d(const ConvShape& s, std::string& why_not);

// Whether an invocation looping once per tap (input channel of its group x kernel position)
// stays within the device's loop iteration limit: conv.direct, conv.transpose_gather and the
// GEMM of conv/gemm.comp (conv.im2col_gemm, conv.1x1) loop so, and came out wrong on lavapipe
// at 73,728 and 80,000 taps; the blocked, tiled and Winograd forms were right.
bool taps_fit(const LayerContext& ctx, const ConvShape& s, std::string& why_not);

// False (`why_not` filled) for a layer of two ConvTransposes (graph_optimizer.h, transpose_pair),
// which only conv.transpose_pair serves.
bool single_transpose(const LayerContext& ctx, std::string& why_not);

// The row-tile shaders (conv/depthwise_tile.comp, conv/direct_tile.comp): 2-D, kernels
// up to `max_kernel`, strides 1 or 2, no dilation, rows of more than 4 outputs, and
// the row span of 8 outputs within 24 inputs.
bool tile_geometry(const ConvShape& s, int64_t max_kernel, std::string& why_not);
// The tile shaders' geometry specialization constants 3..10 for a dispatch of `shader`: its texel
// build (picked with wide stores) stores eight wide (kVecStore 2 where OW % 8 == 0).
std::vector<SpecValue> tile_spec(const ConvShape& s, uint32_t rows, bool has_bias, const std::string& shader);

// ---------------------------------------------------------------------------
// The GEMM dispatches of conv_gemm.cpp, also run by the Winograd and ConvTranspose forms.

struct GemmBlocking {
  uint32_t tile_m = 8;  // output channels per invocation
  uint32_t tile_p = 8;  // positions per invocation
};

// One conv/gemm.comp dispatch: per batch n and group g,
//   Y[n][g * mg + m][pos] = bias + sum over k < kdim of A[g][k][m] * B(n, g, k, pos)
// with B's element at n * b_batch + g * b_group + k * ldb + pos.
struct GemmShape {
  int64_t batch = 1, group = 1, mg = 0, mg_pad = 0, positions = 0, kdim = 0;
  int64_t ldb = 0, b_group = 0, b_batch = 0;
  bool aligned_b = false;  // ldb, b_group and b_batch multiples of 4; rows readable up to positions rounded up to 4
};

std::optional<Dispatch> gemm_dispatch(const LayerContext& ctx, const GemmShape& g, GemmBlocking blocking, BindingRef a,
                                      BindingRef b, BindingRef bias, bool has_bias, BindingRef y, std::string& why_not);

struct BlockShape {
  uint32_t rows = 16, col_vecs = 4;
  bool wide_a = false;  // gemm/block_wide_a: A read eight floats per load (fp32, device feature int64)
  bool shuffle_a = false;  // gemm/block_shuffle_a: A's rows shared through subgroup shuffles (rows % 8 == 0)
};

// gemm/block.comp on the product `p`: A and B as bound, C the bias along M,
// Y the layer output, stored densely or through a depth-to-space `map`.
std::optional<Dispatch> block_dispatch(const LayerContext& ctx, LayerPlan& plan, const Product& p, BlockShape block,
                                       BindingRef a, BindingRef b, std::pair<BindingRef, bool> bias,
                                       const std::array<uint32_t, 6>& map, std::string& why_not,
                                       BindingRef y = BindingRef::output(0));

// ---------------------------------------------------------------------------
// The planners, one per form, registered in conv.cpp.

// conv_direct.cpp
std::optional<LayerPlan> plan_conv_direct(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_transpose_gather(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_direct_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not);
// conv_depthwise.cpp
std::optional<LayerPlan> plan_depthwise(const LayerContext& ctx, uint32_t max_pixels, std::string& why_not);
std::optional<LayerPlan> plan_depthwise_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not);
// conv_gemm.cpp
std::optional<LayerPlan> plan_im2col_gemm(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not);
std::optional<LayerPlan> plan_pointwise(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not);
std::optional<LayerPlan> plan_pointwise_block(const LayerContext& ctx, BlockShape block, std::string& why_not);
std::optional<LayerPlan> plan_pointwise_gpu(const LayerContext& ctx, const SmemTile* smem, const CoopTile* coop,
                                            std::string& why_not);
std::optional<LayerPlan> plan_im2col_block(const LayerContext& ctx, BlockShape block, std::string& why_not);
std::optional<LayerPlan> plan_im2col_splitk(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_implicit_coopmat(const LayerContext& ctx, CoopTile tile, bool transpose,
                                               std::string& why_not);
std::optional<LayerPlan> plan_implicit_gemm(const LayerContext& ctx, SmemTile tile, bool transpose,
                                            std::string& why_not);
// conv_transpose.cpp
std::optional<LayerPlan> plan_transpose_block(const LayerContext& ctx, BlockShape block, std::string& why_not);
std::optional<LayerPlan> plan_transpose_pair(const LayerContext& ctx, std::string& why_not);
// conv_winograd.cpp
std::optional<LayerPlan> plan_winograd(const LayerContext& ctx, GemmBlocking blocking, std::optional<BlockShape> block,
                                       std::string& why_not, int out_tile = 2);
// conv_integer.cpp
std::optional<LayerPlan> plan_conv_integer(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_qlinear_conv(const LayerContext& ctx, std::string& why_not);
// conv_deform.cpp
std::optional<LayerPlan> plan_deform_conv(const LayerContext& ctx, std::string& why_not);

}  // namespace vkg::conv_tactics
