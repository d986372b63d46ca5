// Tactic validation (--validate-tactics, docs/builder.md#validated-tactics):
// how far a candidate's output on a layer's real inputs may stray from the
// reference backend's before the builder rejects the candidate.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/engine/tactic.h"

namespace vkg {

// The error of `got` against the reference's `expected` (same shape and dtype
// class). Float tensors: the largest absolute difference divided by the largest
// reference magnitude (at least 1e-6), so that the measure follows the tensor's
// scale and not the values that happen to be near zero; NaN and infinities must
// sit where the reference has them (else the error is infinite). Integer and
// bool tensors: the fraction of elements that differ. A shape mismatch is infinite.
double validation_error(const Tensor& got, const Tensor& expected);

// The largest error a candidate of `precision` may show on an output of `dtype`:
// float outputs 1e-3 in fp32 and 3e-2 in fp16 (fp16 storage rounds each value
// by up to 5e-4 of its magnitude, and fp16 sums of many terms drift further);
// integer outputs must match exactly in fp32, and in fp16 may differ in 1% of
// elements (an index chosen among values that fp16 rounds to ties).
double validation_tolerance(Precision precision, DType dtype);

}  // namespace vkg
