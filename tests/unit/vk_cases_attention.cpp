// Conformance cases of the attention family (runtime/tactics/attention.cpp):
// - RotaryEmbedding: 4-D and 3-D (num_heads) inputs, interleaved or split halves, a
//   partial rotary_embedding_dim, caches indexed by runtime or constant position_ids, or
//   per token without them, caches wider than rotary_dim / 2.
// - Attention: 4-D and 3-D inputs, grouped K/V heads, a V head size unlike Q's, is_causal
//   (with a past cache too), float masks (2-D, and 4-D broadcast over heads) and bool masks
//   (a row masked out entirely gives NaN), scale, softcap, past key/value with the present
//   outputs, every qk_matmul_output_mode, and the tactic's limits (head size above 256,
//   softmax in double).
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

// Random booleans with the first key of every row kept, unless `all_masked_row` (row 0 of
// every [q_seq, total] plane is then entirely false).
Tensor keep_first_key(Tensor mask, bool all_masked_row) {
  const int64_t total = mask.shape().back();
  const int64_t q_seq = mask.shape()[mask.shape().size() - 2];
  for (int64_t r = 0; r < mask.size() / total; ++r)
    for (int64_t j = 0; j < total; ++j) {
      bool& m = mask.data<bool>()[r * total + j];
      if (j == 0) m = true;
      if (all_masked_row && r % q_seq == 0) m = false;
    }
  return mask;
}

std::vector<VkCase> attention_cases() {
  std::vector<VkCase> cases;
  // Inputs Q, K, V, attn_mask, past_key, past_value; outputs Y, present_key, present_value, qk.
  const auto attn = [](const std::string& name, std::vector<std::optional<Tensor>> inputs, Attrs attrs,
                       std::vector<bool> outputs = {true}) {
    inputs.resize(6);
    VkCase c = make_case(name, "Attention", std::move(inputs), std::move(attrs), outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o)
      if (!outputs[o]) c.node.outputs[o] = "";
    c.opset = 23;
    return c;
  };
  const auto heads = [](int64_t q, int64_t kv) -> Attrs {
    return {{"q_num_heads", int_attr(q)}, {"kv_num_heads", int_attr(kv)}};
  };
  cases.push_back(
      attn("Attention 4-D, 2x3x5x8 keys 7",
           {random_floats({2, 3, 5, 8}, 600), random_floats({2, 3, 7, 8}, 601), random_floats({2, 3, 7, 8}, 602)}, {}));
  {
    Attrs a = heads(4, 2);
    a["is_causal"] = int_attr(1);
    cases.push_back(
        attn("Attention 3-D GQA 4/2 causal, v head 6",
             {random_floats({2, 6, 32}, 603), random_floats({2, 6, 16}, 604), random_floats({2, 6, 12}, 605)}, a));
  }
  cases.push_back(attn("Attention 4-D float mask 2-D, scale, softcap",
                       {random_floats({1, 2, 4, 16}, 606), random_floats({1, 2, 9, 16}, 607),
                        random_floats({1, 2, 9, 16}, 608), random_floats({4, 9}, 609, -2, 2)},
                       {{"scale", float_attr(0.3f)}, {"softcap", float_attr(2.5f)}}));
  cases.push_back(attn("Attention 4-D bool mask [2,1,3,10], a row masked out",
                       {random_floats({2, 4, 3, 8}, 610), random_floats({2, 4, 10, 8}, 611),
                        random_floats({2, 4, 10, 8}, 612), keep_first_key(bools({2, 1, 3, 10}, 613), true)},
                       {}));
  {
    Attrs a = heads(2, 1);
    a["is_causal"] = int_attr(1);
    a["qk_matmul_output_mode"] = int_attr(0);
    cases.push_back(attn("Attention 3-D past 4 + 3, causal, present and qk outputs",
                         {random_floats({2, 3, 16}, 614), random_floats({2, 3, 8}, 615), random_floats({2, 3, 8}, 616),
                          std::nullopt, random_floats({2, 1, 4, 8}, 617), random_floats({2, 1, 4, 8}, 618)},
                         a, {true, true, true, true}));
  }
  for (int64_t mode : {1, 2, 3}) {
    Attrs a = {{"qk_matmul_output_mode", int_attr(mode)}, {"softcap", float_attr(mode == 2 ? 1.5f : 0.0f)}};
    cases.push_back(attn("Attention 4-D qk_matmul_output_mode " + std::to_string(mode) + ", float mask [1,3,1,6]",
                         {random_floats({1, 3, 5, 4}, 620 + uint32_t(mode)), random_floats({1, 3, 6, 4}, 624),
                          random_floats({1, 3, 6, 4}, 625), random_floats({1, 3, 1, 6}, 626)},
                         a, {true, false, false, true}));
  }
  cases.push_back(attn("Attention 4-D head size 320",
                       {random_floats({1, 1, 2, 320}, 630, -0.3f, 0.3f),
                        random_floats({1, 1, 3, 320}, 631, -0.3f, 0.3f), random_floats({1, 1, 3, 4}, 632)},
                       {}));
  cases.push_back(
      attn("Attention 4-D softmax in double",
           {random_floats({1, 2, 3, 4}, 633), random_floats({1, 2, 3, 4}, 634), random_floats({1, 2, 3, 4}, 635)},
           {{"softmax_precision", int_attr(11)}}));
  return cases;
}

}  // namespace

VKG_VK_CASES(attention) {
  std::vector<VkCase> cases = rotary_cases();
  std::vector<VkCase> more = attention_cases();
  cases.insert(cases.end(), more.begin(), more.end());
  return cases;
}

}  // namespace vkg::test
