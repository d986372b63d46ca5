// Seeded corruption of file contents for the loader robustness tests: the
// same seed gives the same mutations, so a failure is repeatable.
#pragma once

#include <cstdlib>
#include <random>
#include <string>

namespace vkg::test {

// One to four edits of `text`: a byte flipped to a random value, a structural
// JSON character inserted, a run of random bytes spliced in, up to eight bytes
// deleted, or the text truncated.
inline std::string seeded_mutation(std::string text, std::mt19937& rng) {
  const int edits = 1 + int(rng() % 4);
  for (int i = 0; i < edits && !text.empty(); ++i) {
    const size_t pos = rng() % text.size();
    switch (rng() % 5) {
      case 0:
        text[pos] = char(rng() % 256);
        break;
      case 1:
        text.insert(pos, 1, "{}[]\",:0-e."[rng() % 11]);
        break;
      case 2: {
        std::string noise(1 + rng() % 16, '\0');
        for (char& c : noise) c = char(rng());
        text.insert(pos, noise);
        break;
      }
      case 3:
        text.erase(pos, 1 + rng() % 8);
        break;
      case 4:
        text.resize(pos);
        break;
    }
  }
  return text;
}

// How many mutations a robustness test tries: `fallback`, or VKGRAPHY_FUZZ_ITERATIONS for a longer local run.
inline int fuzz_iterations(int fallback) {
  const char* env = std::getenv("VKGRAPHY_FUZZ_ITERATIONS");
  return env ? std::atoi(env) : fallback;
}

}  // namespace vkg::test
