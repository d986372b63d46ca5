#include "runtime/engine/cpu_cost_model.h"

#include <algorithm>
#include <array>

namespace vkg {

namespace {

// Tactic names without their precision suffix, each with the least ratio to a layer's winner it
// measured (lavapipe, 2 threads, PP-OCRv4 det 320x320 and rec 48x320, 2026-11-28).
constexpr std::array<std::string_view, 20> kDominated = {
    "conv.1x1_block16x16_wide_a",     // 1.31
    "conv.im2col_block16x16_wide_a",  // 1.36
    "gemm.block16x16_wide_a",         // 1.86
    "transpose.scalar",               // 1.28
    "slice.scalar",                   // 1.42
    "concat.scalar",                  // 2.14
    "concat.single",                  // 4.17
    "resize.scalar",                  // 17.0
    "gemm.reg4x4",                    // 1.26
    "gemm.reg16x4",                   // 1.72
    "gemm.reg16x8",                   // 1.78
    "gemm.sgreg16x4",                 // 1.29
    "conv.im2col_gemm.4x8",           // 1.39
    "conv.winograd_f23_block8x8",     // 1.33
    "conv.winograd_f23_block24x16",   // 1.50
    "conv.direct",                    // 3.27
    "conv.depthwise",                 // 5.27
    "conv.depthwise_wide",            // 5.25
    "pool.direct",                    // 7.94
    "softmax.row",                    // 3.48
};

// Forms (name prefixes) and the forms beside which they lose, with the least ratio to the winner
// they measured where both served (lavapipe, 2 threads, PP-OCRv4 det 320x320 and rec 48x320,
// level 3, 2026-12-02).
struct DominatedBeside {
  std::string_view form, beside;
};
constexpr std::array<DominatedBeside, 1> kDominatedBeside = {{
    {"conv.im2col_gemm.", "conv.depthwise_tile"},  // det 6.36 fp16, 7.28 fp32; rec 9.43, 10.64
}};

}  // namespace

bool dominated_on_cpu_beside(std::string_view tactic_name, std::span<const std::string_view> others) {
  for (const DominatedBeside& rule : kDominatedBeside) {
    if (!tactic_name.starts_with(rule.form)) continue;
    if (std::any_of(others.begin(), others.end(), [&](std::string_view o) { return o.starts_with(rule.beside); }))
      return true;
  }
  return false;
}

bool dominated_on_cpu(std::string_view tactic_name) {
  const size_t dot = tactic_name.rfind('.');
  const std::string_view family = dot == std::string_view::npos ? tactic_name : tactic_name.substr(0, dot);
  return std::find(kDominated.begin(), kDominated.end(), family) != kDominated.end();
}

}  // namespace vkg
