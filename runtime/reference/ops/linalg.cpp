#include "runtime/reference/kernel.h"

namespace vkg {

void register_linalg_ops(OpRegistry& registry) { (void)registry; }

}  // namespace vkg
