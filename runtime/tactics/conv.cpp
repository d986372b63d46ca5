// Vulkan tactics of the conv family (see runtime/engine/tactic.h).
#include "runtime/engine/tactic.h"

namespace vkg {

void register_conv_tactics(TacticRegistry& r) { (void)r; }

}  // namespace vkg
