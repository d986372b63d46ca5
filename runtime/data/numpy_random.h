// A bit-exact emulation of the draws Polygraphy's DataLoader makes from numpy's
// legacy generator, np.random.RandomState(seed): random_sample() and
// randint(low, high, size, dtype). With it, vkgraphy generates the very same
// input data as `polygraphy run --seed N` does.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace vkg {

class NumpyRandomState {
 public:
  // np.random.RandomState(seed): MT19937 seeded with init_genrand(seed).
  explicit NumpyRandomState(uint32_t seed) : mt_(seed) {}

  // RandomState.random_sample(): a double in [0, 1) with 53 random bits.
  double random_sample();

  // RandomState.randint(..., size=count, dtype) for an unsigned or signed integer
  // dtype of `bits` (8, 16, 32 or 64) bits: `count` values off + r with r uniform in
  // [0, rng], drawn with numpy's masked rejection method and its buffering of
  // 8- and 16-bit draws. Values are returned modulo 2^bits; signed dtypes use the
  // two's-complement bits of low as `off` and high - low as `rng`.
  std::vector<uint64_t> randint(int bits, uint64_t off, uint64_t rng, int64_t count);

  // RandomState.randint(..., size=count, dtype=bool) with off = low, rng = high - low.
  std::vector<bool> randint_bool(bool off, bool rng, int64_t count);

 private:
  uint32_t next32() { return uint32_t(mt_()); }
  uint64_t next64();

  std::mt19937 mt_;  // same seeding and tempering as numpy's mt19937
};

}  // namespace vkg
