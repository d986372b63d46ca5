// Vulkan tactics of the gemm family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_gemm_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
