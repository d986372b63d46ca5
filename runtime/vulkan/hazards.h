// Which dispatches of a recording need a pipeline barrier before them. A barrier after every
// dispatch costs a GPU a few microseconds each and keeps independent layers (the branches of a
// residual block, the heads of a detector) from overlapping; the executor places one only where a
// dispatch reads memory an earlier dispatch since the last barrier wrote (read after write), or
// writes memory one read or wrote (write after read, write after write). Regions are byte ranges
// of buffers: tensors that share a slot, and views into a tensor, are compared by their ranges.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vkg::vk {

class Buffer;

// One binding of a dispatch: a buffer region and whether the shader writes it.
struct BufferAccess {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;  // 0: to the end of the buffer
  bool write = false;
};

// What was read and written since the last barrier.
class HazardTracker {
 public:
  // True when a dispatch with these accesses must wait for those recorded since the last barrier.
  bool conflicts(std::span<const BufferAccess> accesses) const;
  // Records a dispatch's accesses (after a barrier where conflicts() said so).
  void add(std::span<const BufferAccess> accesses);
  // A barrier was recorded: nothing is pending.
  void clear();
  // True when no dispatch was recorded since the last barrier.
  bool empty() const { return reads_.empty() && writes_.empty(); }

 private:
  std::vector<BufferAccess> reads_, writes_;
};

}  // namespace vkg::vk
