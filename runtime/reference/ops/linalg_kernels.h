// Private to the linalg op family (Conv, ConvTranspose, Gemm, MatMul, the pools and
// the 8-bit integer forms of Conv and MatMul): the shared GEMM routine, the walk over
// a window's rows (the geometry itself is runtime/core/window_geometry.h), and the
// kernels that register_linalg_ops() in linalg.cpp registers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"
#include "runtime/core/window_geometry.h"
#include "runtime/reference/kernel.h"

namespace vkg::linalg {

// C[m x n] = alpha * op(A) * op(B) + beta * C, all row-major with the given row strides.
// op(A) is m x k: A is stored m x k, or k x m when trans_a. op(B) is k x n: B is stored
// k x n, or n x k when trans_b. When beta == 0, C is only written, never read.
// Cache-blocked and, for large products, split over reference_threads() threads; the
// split never changes the order of the sums, so results do not depend on the thread
// count. Instantiated for float, double, int32_t, int64_t, uint32_t and uint64_t.
template <class T> void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                             int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Threads the reference kernels may use: the VKGRAPHY_REF_THREADS environment variable
// when set (>= 1), otherwise the hardware concurrency capped at 4.
int reference_threads();

// The type a float kernel computes in: float32 for float32, float16 and bfloat16
// inputs, float64 for float64. Throws Error naming the node for any other type.
DType float_compute_type(const Node& node, DType dt);
// `t` itself when it already has type `to`, else a converted copy kept in `storage`.
const Tensor& as_type(const Tensor& t, DType to, Tensor& storage);
// A kernel result of one tensor.
std::vector<Tensor> one_output(Tensor t);

// Position mapping of a window: position o of the iterated grid and kernel offset k
// address position o * stride + k * dilation - pad_begin of the target grid. For a
// Conv, the iterated grid is the output and the target is the input; ConvTranspose
// swaps the two.
struct WindowMap {
  Shape iter;
  Shape target;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
};

// Visits, for the kernel offset `kpos` (one index per dim), the rows [row_begin, row_end)
// of the iterated grid (a row: the positions that share all but the last index) as
//   fn(row_start, target_row_start, lo, hi)
// where row_start is the flat index of the row's first position relative to the first
// visited row, and for j in [lo, hi) position row_start + j addresses the target at flat
// index target_row_start + j * strides.back() (the positions outside [lo, hi) fall into
// the padding). Rows that lie entirely in the padding get lo == hi.
template <class Fn>
void visit_window_rows(const WindowMap& map, const int64_t* kpos, int64_t row_begin, int64_t row_end, Fn&& fn) {
  const size_t r = map.iter.size();
  const int64_t row_len = map.iter[r - 1];
  // Range of the last index that stays inside the target.
  const int64_t off_last = kpos[r - 1] * map.dilations[r - 1] - map.pads_begin[r - 1];
  const int64_t s_last = map.strides[r - 1];
  int64_t lo = off_last >= 0 ? 0 : (-off_last + s_last - 1) / s_last;
  int64_t hi = map.target[r - 1] - off_last <= 0 ? 0 : (map.target[r - 1] - off_last + s_last - 1) / s_last;
  lo = std::min(lo, row_len);
  hi = std::max(lo, std::min(hi, row_len));

  std::vector<int64_t> idx(r, 0);  // index of the current row over the leading dims
  for (int64_t rest = row_begin, d = int64_t(r) - 2; d >= 0; --d) {
    idx[size_t(d)] = rest % map.iter[size_t(d)];
    rest /= map.iter[size_t(d)];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    bool inside = true;
    int64_t target = 0;
    for (size_t d = 0; d + 1 < r; ++d) {
      const int64_t t = idx[d] * map.strides[d] + kpos[d] * map.dilations[d] - map.pads_begin[d];
      inside = inside && t >= 0 && t < map.target[d];
      target = target * map.target[d] + t;
    }
    target = target * map.target[r - 1] + off_last;
    const int64_t row_start = (row - row_begin) * row_len;
    if (inside) {
      fn(row_start, target, lo, hi);
    } else {
      fn(row_start, int64_t(0), int64_t(0), int64_t(0));
    }
    for (size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < map.iter[d]) break;
      idx[d] = 0;
    }
  }
}

// Number of rows of a grid (the product of all but its last dim).
inline int64_t grid_rows(const Shape& grid) { return num_elements(Shape(grid.begin(), grid.end() - 1)); }

// A Conv-like node's group and window, after checking X and W (ranks, channel counts,
// group, kernel_shape against W's dims). Throws Error naming the node.
struct ConvSetup {
  int64_t group = 1;
  WindowGeometry geometry;
};
ConvSetup conv_setup(const Node& node, const Tensor& x, const Tensor& w);
// The optional bias input `index` of a Conv-like node: nullptr when absent, else checked
// to be 1-D with `channels` values of type `dtype`.
const Tensor* conv_bias(const KernelContext& ctx, size_t index, int64_t channels, DType dtype);
// Y = conv(X, W) + B, X, W and B all of type T (float, double or int32_t); B may be null.
// Padding reads as zero.
template <class T> Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvSetup& setup);
// MatMul with numpy semantics (1-D promotion, broadcast batch dims) of a and b, both of
// type T (float, double, int32_t, int64_t, uint32_t or uint64_t). Throws Error naming the
// node on incompatible shapes.
template <class T> Tensor matmul_forward(const Node& node, const Tensor& a, const Tensor& b);

// The kernels. Each returns the node's outputs and throws Error naming the node.
std::vector<Tensor> conv(const KernelContext& ctx);
std::vector<Tensor> conv_transpose(const KernelContext& ctx);
std::vector<Tensor> deform_conv(const KernelContext& ctx);
std::vector<Tensor> gemm_op(const KernelContext& ctx);
std::vector<Tensor> matmul(const KernelContext& ctx);
std::vector<Tensor> det(const KernelContext& ctx);  // Det (opset 11)
std::vector<Tensor> einsum(const KernelContext& ctx);  // einsum.cpp
std::vector<Tensor> max_pool(const KernelContext& ctx);
std::vector<Tensor> average_pool(const KernelContext& ctx);
std::vector<Tensor> lp_pool(const KernelContext& ctx);
std::vector<Tensor> global_average_pool(const KernelContext& ctx);
std::vector<Tensor> global_max_pool(const KernelContext& ctx);
std::vector<Tensor> global_lp_pool(const KernelContext& ctx);
std::vector<Tensor> max_unpool(const KernelContext& ctx);
std::vector<Tensor> conv_integer(const KernelContext& ctx);
std::vector<Tensor> matmul_integer(const KernelContext& ctx);
std::vector<Tensor> qlinear_conv(const KernelContext& ctx);
std::vector<Tensor> qlinear_matmul(const KernelContext& ctx);

}  // namespace vkg::linalg
