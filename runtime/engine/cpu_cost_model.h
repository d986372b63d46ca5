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
// A rule drops candidates only where one it keeps serves the layer.
#pragma once

#include <string_view>

namespace vkg {

// Whether the tactic (by name, any precision variant) is of a form that measured no closer than
// 1.25x to the winner of any layer on a CPU device.
bool dominated_on_cpu(std::string_view tactic_name);

}  // namespace vkg
