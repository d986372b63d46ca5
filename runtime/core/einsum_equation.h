// An ONNX Einsum equation ("bij,bjk->bik", "...ii->...i", "ij,jk") parsed once and resolved
// against its operands' shapes into plain loops: every distinct label (a letter, or one
// dimension covered by the ellipsis) gets a number, a size and, per operand, an element
// stride. The output is the sum over the labels absent from it of the product of the
// operands. The reference kernel and the Vulkan tactics share this one reading.
//
// Rules (numpy's, which made ONNX's test data):
//   - a term holds letters (a-z, A-Z) and at most one "..."; spaces are ignored;
//   - a letter repeated within one operand reads its diagonal (the strides of its axes add);
//   - "..." stands for the operand's axes not named by letters; the ellipses of all operands
//     broadcast numpy-style (aligned at the right, size 1 against size n);
//   - without "->" the output is the ellipsis dimensions followed by the letters that occur
//     exactly once over all the inputs, in ASCII order;
//   - with "->" the output names each letter at most once, and only letters of the inputs;
//     ellipsis dimensions that the output omits are summed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace vkg {

struct EinsumEquation {
  std::vector<int64_t> sizes;                // per label
  std::vector<std::string> names;            // per label: "i", or "...0" for the first ellipsis dimension
  std::vector<std::vector<int32_t>> inputs;  // per operand, the label of each axis
  std::vector<int32_t> output;               // the label of each output axis
  std::vector<int32_t> summed;               // the labels absent from the output, in label order
  // strides[operand][label]: elements of that operand to step one along the label (the sum
  // over its axes of that label; 0 where the operand lacks it or broadcasts a size-1 axis).
  std::vector<std::vector<int64_t>> strides;

  size_t num_labels() const { return sizes.size(); }
  Shape output_shape() const;
  int64_t summed_count() const;  // the product of the summed labels' sizes
};

// A two-operand equation as a batched matrix product Y[b, m, n] = sum_k A(b, m, k) * B(b, k, n)
// over a dense row-major output: the output's labels are batch labels, then the M labels
// (of A alone), then the N labels (of B alone); the summed labels are in both operands.
// The M, N and K labels each collapse into one stride per operand (a group of labels whose
// strides nest like a row-major block); batch labels are any, their offsets enumerated.
// Size-1 labels are ignored. A is operand `a` (0 or 1), B the other one.
struct EinsumGemm {
  size_t a = 0, b = 1;
  int64_t M = 1, N = 1, K = 1;
  int64_t a_sm = 0, a_sk = 0, b_sk = 0, b_sn = 0;
  std::vector<int64_t> a_offsets, b_offsets;  // per batch (row-major over the batch labels)
};

// The equation as a matrix product; nullopt with `why_not` filled when it is not of that form.
std::optional<EinsumGemm> einsum_as_gemm(const EinsumEquation& e, std::string& why_not);

// Parses `equation` for operands of `shapes`. Throws Error starting with `where` (e.g. the
// node's description) for a malformed equation or shapes that do not fit it.
EinsumEquation parse_einsum(const std::string& equation, const std::vector<Shape>& shapes, const std::string& where);

}  // namespace vkg
