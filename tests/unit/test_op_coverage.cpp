// The reference backend covers every op the foundation promises (docs/reference-backend.md).
#include <gtest/gtest.h>

#include "runtime/reference/kernel.h"

namespace vkg {
namespace {

TEST(OpCoverage, EveryPromisedOpHasAReferenceKernel) {
  const char* promised[] = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "MaxPool", "AveragePool",
      "GlobalAveragePool", "GlobalMaxPool", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean",
      "Equal", "Less", "Greater", "Where", "Not", "And", "Or", "Relu", "LeakyRelu", "PRelu", "Sigmoid",
      "HardSigmoid", "HardSwish", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Clip",
      "Softplus", "Elu", "Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization", "ReduceMean",
      "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ArgMax", "Concat", "Split", "Slice", "Gather",
      "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand", "Tile", "Pad", "Resize", "Cast",
      "Identity", "Dropout", "Constant", "ConstantOfShape", "Shape", "Range"};
  const OpRegistry& registry = OpRegistry::reference();
  for (const char* op : promised) EXPECT_NE(registry.find(op), nullptr) << op;
}

}  // namespace
}  // namespace vkg
