// Vulkan tactics of the pool family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_pool_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
