// Conformance cases of the attention family (runtime/tactics/attention.cpp):
// - RotaryEmbedding: 4-D and 3-D (num_heads) inputs, interleaved or split halves, a
//   partial rotary_embedding_dim, caches indexed by runtime or constant position_ids, or
//   per token without them, caches wider than rotary_dim / 2.
#include <gtest/gtest.h>

#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Position ids in [0, max_position), reproducible from `seed`.
Tensor positions(int64_t batch, int64_t seq, int64_t max_position, uint32_t seed) {
  return integers<int64_t>({batch, seq}, seed, 0, int(max_position - 1));
}

std::vector<VkCase> rotary_cases() {
  std::vector<VkCase> cases;
  const auto rope = [](const std::string& name, Tensor x, Tensor cos, Tensor sin, std::optional<Tensor> pos,
                       Attrs attrs = {}, std::set<size_t> constants = {}) {
    VkCase c = make_case(name, "RotaryEmbedding", {std::move(x), std::move(cos), std::move(sin), std::move(pos)},
                         std::move(attrs), 1, std::move(constants));
    c.opset = 23;
    return c;
  };
  cases.push_back(rope("RotaryEmbedding 4-D positions, 2x3x5x8", random_floats({2, 3, 5, 8}, 300),
                       random_floats({11, 4}, 301, -1, 1), random_floats({11, 4}, 302, -1, 1),
                       positions(2, 5, 11, 303)));
  cases.push_back(rope("RotaryEmbedding 4-D interleaved, constant caches, 1x4x6x16", random_floats({1, 4, 6, 16}, 304),
                       random_floats({8, 8}, 305, -1, 1), random_floats({8, 8}, 306, -1, 1), positions(1, 6, 8, 307),
                       {{"interleaved", int_attr(1)}}, {1, 2}));
  cases.push_back(rope("RotaryEmbedding 3-D num_heads 3 no positions, 2x7x30", random_floats({2, 7, 30}, 308),
                       random_floats({2, 7, 5}, 309, -1, 1), random_floats({2, 7, 5}, 310, -1, 1), std::nullopt,
                       {{"num_heads", int_attr(3)}}));
  cases.push_back(
      rope("RotaryEmbedding 3-D rotary_dim 4 interleaved, wide caches, 1x9x24", random_floats({1, 9, 24}, 311),
           random_floats({12, 6}, 312, -1, 1), random_floats({12, 6}, 313, -1, 1), positions(1, 9, 12, 314),
           {{"num_heads", int_attr(2)}, {"rotary_embedding_dim", int_attr(4)}, {"interleaved", int_attr(1)}}));
  cases.push_back(rope("RotaryEmbedding 4-D rotary_dim 6 no positions, 3x2x4x10", random_floats({3, 2, 4, 10}, 315),
                       random_floats({3, 4, 3}, 316, -1, 1), random_floats({3, 4, 3}, 317, -1, 1), std::nullopt,
                       {{"rotary_embedding_dim", int_attr(6)}}));
  return cases;
}

}  // namespace

VKG_VK_CASES(attention) {
  std::vector<VkCase> cases = rotary_cases();
  return cases;
}

}  // namespace vkg::test
