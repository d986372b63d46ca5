// The builder's cost model for CPU devices (lavapipe): which candidates cannot win a layer there,
// so that they are neither compiled nor timed (BuilderConfig::prune_for_device). On lavapipe a
// candidate's pipeline costs 0.1 to 1 s of LLVM, and its layer runs in milliseconds: compiling
// candidates that lose is most of a cold build (docs/bench.md, "Build time on lavapipe").
//
// Two rules, each measured with every tactic timed (optimization level 5, --no-prune) on
// PP-OCRv4 det and rec on lavapipe, and checked again by bench/build_time.sh prune:
// - shaders that synchronize a workgroup (shared-memory tiles) run slowly on a CPU, where a
//   workgroup's invocations are coroutines on one thread and every barrier switches between them:
//   none won a layer, the best came within 1.06x once, the others 2.2 to 60 times the winner;
// - the forms below never came within 1.25x of a layer's winner: GPU memory-transaction forms
//   (`_wide_a`: 64-bit loads), scalar forms beside vec4 ones, one output per invocation where
//   others compute a register block.
// - forms that lose far to another where both serve a layer: `conv.im2col_gemm` beside the
//   depthwise tiles (a GEMM of K = kernel size per group), at best 6.4x the winner in fp16 and 7.3x
//   in fp32 on det's 14 depthwise layers, 9.4x and 10.6x on rec's 14 (2026-12-02).
// A rule drops candidates only where one it keeps serves the layer.
#pragma once

#include <span>
#include <string_view>

namespace vkg {

// Whether the tactic (by name, any precision variant) is of a form that measured no closer than
// 1.25x to the winner of any layer on a CPU device.
bool dominated_on_cpu(std::string_view tactic_name);

// Whether the tactic is of a form that measured far slower than one of `others` (the names of the
// other candidates of the layer in the same precision) wherever both served a layer on a CPU device.
bool dominated_on_cpu_beside(std::string_view tactic_name, std::span<const std::string_view> others);

}  // namespace vkg
