// Vulkan tactics of the gather family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_gather_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
