// Vulkan tactics of the elementwise family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_elementwise_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
