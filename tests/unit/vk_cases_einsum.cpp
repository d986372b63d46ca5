// Conformance cases of Einsum (runtime/tactics/einsum.cpp): explicit and implicit outputs,
// matrix products (batched, transposed, broadcast ellipsis batches, an inner product, an
// elementwise product), diagonals, sums over every axis, transposes, three and five
// operands, uppercase labels and integer data.
#include <gtest/gtest.h>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

VkCase einsum(const std::string& equation, std::vector<std::optional<Tensor>> inputs, std::set<size_t> constants = {}) {
  VkCase c = make_case("Einsum " + equation, "Einsum", std::move(inputs), {{"equation", string_attr(equation)}}, 1,
                       std::move(constants));
  c.opset = 12;
  return c;
}

}  // namespace

VKG_VK_CASES(einsum) {
  std::vector<VkCase> cases;
  cases.push_back(einsum("bij,bjk->bik", {random_floats({3, 5, 7}, 400), random_floats({3, 7, 6}, 401)}));
  cases.push_back(einsum("ij,jk", {random_floats({9, 12}, 402), random_floats({12, 10}, 403)}, {1}));
  cases.push_back(einsum("bhqd,bhkd->bhqk", {random_floats({2, 3, 5, 8}, 404), random_floats({2, 3, 7, 8}, 405)}));
  cases.push_back(einsum("...ij,...jk->...ik", {random_floats({2, 1, 3, 4}, 406), random_floats({5, 4, 6}, 407)}));
  cases.push_back(einsum("i,i", {random_floats({37}, 408), random_floats({37}, 409)}));
  cases.push_back(einsum("ij,ij->ij", {random_floats({6, 5}, 410), random_floats({6, 5}, 411)}));
  cases.push_back(einsum("ii->i", {random_floats({6, 6}, 412)}));
  cases.push_back(einsum("...ii->...i", {random_floats({2, 3, 4, 4}, 413)}));
  cases.push_back(einsum("ij->", {random_floats({7, 9}, 414)}));
  cases.push_back(einsum("ij->ji", {random_floats({5, 11}, 415)}));
  cases.push_back(
      einsum("bn,anm,bm->ba", {random_floats({2, 4}, 416), random_floats({3, 4, 5}, 417), random_floats({2, 5}, 418)}));
  cases.push_back(einsum("Ab,bC", {random_floats({4, 3}, 419), random_floats({3, 2}, 420)}));
  cases.push_back(einsum("ij,jk->ik", {integers<int32_t>({4, 5}, 421, -4, 4), integers<int32_t>({5, 3}, 422, -4, 4)}));
  cases.push_back(einsum("a,a,a,a,a->a", {random_floats({8}, 423), random_floats({8}, 424), random_floats({8}, 425),
                                          random_floats({8}, 426), random_floats({8}, 427)}));
  return cases;
}

}  // namespace vkg::test
