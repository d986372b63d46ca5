// Vulkan tactics of the movement family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_movement_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
