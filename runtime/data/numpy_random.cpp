#include "runtime/data/numpy_random.h"

#include "runtime/core/error.h"

namespace vkg {

namespace {

// The smallest all-ones mask covering rng, as numpy's gen_mask.
uint64_t gen_mask(uint64_t rng) {
  uint64_t mask = rng;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

}  // namespace

double NumpyRandomState::random_sample() {
  const uint32_t a = next32() >> 5;
  const uint32_t b = next32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

uint64_t NumpyRandomState::next64() {
  const uint64_t high = next32();
  const uint64_t low = next32();
  return high << 32 | low;
}

std::vector<uint64_t> NumpyRandomState::randint(int bits, uint64_t off, uint64_t rng, int64_t count) {
  VKG_CHECK(bits == 8 || bits == 16 || bits == 32 || bits == 64, "randint: unsupported integer width " << bits);
  const uint64_t width_mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  std::vector<uint64_t> out(size_t(count), off & width_mask);
  if (rng == 0) return out;

  // 8- and 16-bit draws are cut from one 32-bit draw, low bits first.
  uint32_t buf = 0;
  int bcnt = 0;
  auto buffered = [&]() -> uint64_t {
    if (bcnt == 0) {
      buf = next32();
      bcnt = 32 / bits - 1;
    } else {
      buf >>= bits;
      --bcnt;
    }
    return buf & width_mask;
  };

  const uint64_t mask = gen_mask(rng);
  for (auto& value : out) {
    uint64_t r = 0;
    if (bits < 32) {
      if (rng == width_mask) {
        r = buffered();
      } else {
        do r = buffered() & mask;
        while (r > rng);
      }
    } else if (rng <= 0xffffffffu) {  // 32-bit draws suffice, also for 64-bit dtypes
      if (rng == 0xffffffffu) {
        r = next32();
      } else {
        do r = next32() & mask;
        while (r > rng);
      }
    } else if (rng == ~uint64_t(0)) {
      r = next64();
    } else {
      do r = next64() & mask;
      while (r > rng);
    }
    value = (off + r) & width_mask;
  }
  return out;
}

std::vector<bool> NumpyRandomState::randint_bool(bool off, bool rng, int64_t count) {
  std::vector<bool> out(size_t(count), off);
  if (!rng) return out;
  uint32_t buf = 0;
  int bcnt = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (bcnt == 0) {
      buf = next32();
      bcnt = 31;
    } else {
      buf >>= 1;
      --bcnt;
    }
    out[i] = (buf & 1u) != 0;
  }
  return out;
}

}  // namespace vkg
