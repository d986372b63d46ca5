// Vulkan tactics of the reduce family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_reduce_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
