// The cache-blocked GEMM shared by Conv, ConvTranspose, Gemm and MatMul.
//
// Classic Goto/BLIS structure: op(B) is packed in kc x NR column panels, op(A) in
// MR x kc row panels, and a register-blocked MR x NR micro-kernel multiplies one pair
// of panels. The micro-kernel accumulates in 16-byte vectors held in registers.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg::linalg {

namespace {

// Register block (MR x NR, NR two vectors wide) and cache block sizes per element type.
template <class T> struct Blocking {
  static constexpr int64_t MR = 4;
  static constexpr int64_t NR = 2 * int64_t(16 / sizeof(T));
  static constexpr int64_t KC = 256;
  static constexpr int64_t MC = 128;
  static constexpr int64_t NC = 2048;
};

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// Copies rows r0 .. r0 + count, columns p0 .. p0 + kc of a matrix M into R-row panels
// (element (r, p) of a panel at p * R + r), zero-padding the last panel. M is stored
// row-major in `x` with leading dimension ld, or, when `trans`, its transpose is.
// Reads follow the storage order.
template <int64_t R, class T>
void pack_panels(bool trans, const T* x, int64_t ld, int64_t r0, int64_t p0, int64_t count, int64_t kc, T* out) {
  for (int64_t ir = 0; ir < count; ir += R) {
    const int64_t rows = std::min(R, count - ir);
    T* panel = out + ir * kc;
    if (rows < R) std::fill(panel, panel + kc * R, T(0));
    if (trans) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = x + (p0 + p) * ld + r0 + ir;
        for (int64_t i = 0; i < rows; ++i) panel[p * R + i] = src[i];
      }
    } else {
      for (int64_t i = 0; i < rows; ++i) {
        const T* src = x + (r0 + ir + i) * ld + p0;
        for (int64_t p = 0; p < kc; ++p) panel[p * R + i] = src[p];
      }
    }
  }
}

// Copies op(A)[i0 : i0 + mc, p0 : p0 + kc] into MR-row panels (element (i, p) of a
// panel at p * MR + i).
template <class T>
void pack_a(bool trans, const T* a, int64_t lda, int64_t i0, int64_t p0, int64_t mc, int64_t kc, T* out) {
  pack_panels<Blocking<T>::MR>(trans, a, lda, i0, p0, mc, kc, out);
}

// Copies op(B)[p0 : p0 + kc, j0 : j0 + nc] into NR-column panels (element (p, j) of a
// panel at p * NR + j): the rows of op(B)^T, which is stored untransposed when
// op(B) is transposed.
template <class T>
void pack_b(bool trans, const T* b, int64_t ldb, int64_t p0, int64_t j0, int64_t kc, int64_t nc, T* out) {
  pack_panels<Blocking<T>::NR>(!trans, b, ldb, j0, p0, nc, kc, out);
}

// A 16-byte SIMD vector of T (GCC/Clang vector extension, SSE2/NEON width), which
// keeps the micro-kernel vectorized at any optimization level.
template <class T> using Vec __attribute__((vector_size(16))) = T;
template <class T> constexpr int64_t kLanes = int64_t(sizeof(Vec<T>) / sizeof(T));

template <class T> Vec<T> load_vec(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// C[0:rows, 0:cols] = alpha * (Ap * Bp) + beta * C for one pair of packed panels.
template <class T> void micro_kernel(int64_t kc, const T* ap, const T* bp, T alpha, T beta, T* c, int64_t ldc,
                                     int64_t rows, int64_t cols) {
  constexpr int64_t MR = Blocking<T>::MR;
  constexpr int64_t NR = Blocking<T>::NR;
  constexpr int64_t NV = NR / kLanes<T>;
  Vec<T> acc[MR][NV] = {};
  for (int64_t p = 0; p < kc; ++p) {
    Vec<T> b[NV];
#pragma GCC unroll 8
    for (int64_t v = 0; v < NV; ++v) b[v] = load_vec(bp + p * NR + v * kLanes<T>);
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i) {
      const T a = ap[p * MR + i];
#pragma GCC unroll 8
      for (int64_t v = 0; v < NV; ++v) acc[i][v] += a * b[v];
    }
  }
  T result[MR][NR];
  std::memcpy(result, acc, sizeof(result));
  for (int64_t i = 0; i < rows; ++i) {
    T* crow = c + i * ldc;
    if (beta == T(0)) {
      for (int64_t j = 0; j < cols; ++j) crow[j] = alpha * result[i][j];
    } else {
      for (int64_t j = 0; j < cols; ++j) crow[j] = alpha * result[i][j] + beta * crow[j];
    }
  }
}

// The single-threaded blocked product on the sub-block C[0:m, 0:n].
template <class T> void gemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                                    int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using B = Blocking<T>;
  const int64_t kc_max = std::min(B::KC, k);
  const int64_t mc_max = round_up(std::min(B::MC, m), B::MR);
  const int64_t nc_max = round_up(std::min(B::NC, n), B::NR);
  std::vector<T> a_pack(size_t(mc_max * kc_max));
  std::vector<T> b_pack(size_t(nc_max * kc_max));
  for (int64_t jc = 0; jc < n; jc += B::NC) {
    const int64_t nc = std::min(B::NC, n - jc);
    for (int64_t pc = 0; pc < k; pc += B::KC) {
      const int64_t kc = std::min(B::KC, k - pc);
      const T beta_block = pc == 0 ? beta : T(1);
      pack_b(trans_b, b, ldb, pc, jc, kc, nc, b_pack.data());
      for (int64_t ic = 0; ic < m; ic += B::MC) {
        const int64_t mc = std::min(B::MC, m - ic);
        pack_a(trans_a, a, lda, ic, pc, mc, kc, a_pack.data());
        for (int64_t jr = 0; jr < nc; jr += B::NR) {
          for (int64_t ir = 0; ir < mc; ir += B::MR) {
            micro_kernel(kc, a_pack.data() + ir * kc, b_pack.data() + jr * kc, alpha, beta_block,
                         c + (ic + ir) * ldc + jc + jr, ldc, std::min(B::MR, mc - ir), std::min(B::NR, nc - jr));
          }
        }
      }
    }
  }
}

// C = beta * C for the degenerate k == 0 product.
template <class T> void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

}  // namespace

int reference_threads() {
  static const int threads = [] {
    if (const char* env = std::getenv("VKGRAPHY_REF_THREADS")) {
      const int n = std::atoi(env);
      if (n >= 1) return n;
    }
    const int hw = int(std::thread::hardware_concurrency());
    return std::clamp(hw, 1, 4);
  }();
  return threads;
}

template <class T> void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                             int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  using B = Blocking<T>;
  // Split the larger of m and n into register-block-aligned slices, one per thread.
  constexpr double kMinWorkPerThread = 1 << 20;  // multiply-adds
  const double work = double(m) * double(n) * double(k);
  const bool split_n = n >= m;
  const int64_t block = split_n ? B::NR : B::MR;
  const int64_t blocks = ((split_n ? n : m) + block - 1) / block;
  const int64_t threads = std::min<int64_t>({reference_threads(), blocks, int64_t(work / kMinWorkPerThread) + 1});
  if (threads <= 1) {
    gemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  auto run_slice = [&](int64_t t) {
    const int64_t first = blocks * t / threads * block;
    const int64_t last = std::min(blocks * (t + 1) / threads * block, split_n ? n : m);
    if (first >= last) return;
    if (split_n) {
      const T* b_slice = trans_b ? b + first * ldb : b + first;
      gemm_serial(trans_a, trans_b, m, last - first, k, alpha, a, lda, b_slice, ldb, beta, c + first, ldc);
    } else {
      const T* a_slice = trans_a ? a + first : a + first * lda;
      gemm_serial(trans_a, trans_b, last - first, n, k, alpha, a_slice, lda, b, ldb, beta, c + first * ldc, ldc);
    }
  };
  // Slices whose thread cannot be started run on this one.
  std::vector<std::thread> workers;
  int64_t started = 1;
  for (; started < threads; ++started) {
    try {
      workers.emplace_back(run_slice, started);
    } catch (const std::system_error&) {
      break;
    }
  }
  for (int64_t t = started; t < threads; ++t) run_slice(t);
  run_slice(0);
  for (std::thread& w : workers) w.join();
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t);
template void gemm<int32_t>(bool, bool, int64_t, int64_t, int64_t, int32_t, const int32_t*, int64_t, const int32_t*,
                            int64_t, int32_t, int32_t*, int64_t);
template void gemm<int64_t>(bool, bool, int64_t, int64_t, int64_t, int64_t, const int64_t*, int64_t, const int64_t*,
                            int64_t, int64_t, int64_t*, int64_t);
template void gemm<uint32_t>(bool, bool, int64_t, int64_t, int64_t, uint32_t, const uint32_t*, int64_t, const uint32_t*,
                             int64_t, uint32_t, uint32_t*, int64_t);
template void gemm<uint64_t>(bool, bool, int64_t, int64_t, int64_t, uint64_t, const uint64_t*, int64_t, const uint64_t*,
                             int64_t, uint64_t, uint64_t*, int64_t);

}  // namespace vkg::linalg
