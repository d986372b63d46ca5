#include "runtime/onnx/onnx_op_names.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <utility>

namespace vkg {

namespace {

// Sorted; made with the onnx 1.18 wheel: sorted({s.name for s in onnx.defs.get_all_schemas_with_history()
// if s.domain == "" and s.since_version <= 23}).
constexpr std::array<std::string_view, 196> kOnnxOps = {
    "Abs", "Acos", "Acosh", "Add", "AffineGrid", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
    "Attention", "AveragePool", "BatchNormalization", "Bernoulli", "BitShift", "BitwiseAnd", "BitwiseNot",
    "BitwiseOr", "BitwiseXor", "BlackmanWindow", "Cast", "CastLike", "Ceil", "Celu", "CenterCropPad", "Clip",
    "Col2Im", "Compress", "Concat", "ConcatFromSequence", "Constant", "ConstantOfShape", "Conv", "ConvInteger",
    "ConvTranspose", "Cos", "Cosh", "CumSum", "DFT", "DeformConv", "DepthToSpace", "DequantizeLinear", "Det",
    "Div", "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike",
    "Flatten", "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool",
    "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization",
    "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If", "ImageDecoder",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "LogSoftmax", "Loop", "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max",
    "MaxPool", "MaxRoiPool", "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min", "Mish",
    "Mod", "Mul", "Multinomial", "Neg", "NegativeLogLikelihoodLoss", "NonMaxSuppression", "NonZero", "Not",
    "OneHot", "Optional", "OptionalGetElement", "OptionalHasElement", "Or", "PRelu", "Pad", "Pow",
    "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RMSNormalization", "RNN", "RandomNormal",
    "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Range", "Reciprocal", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReduceSumSquare", "RegexFullMatch", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign",
    "RotaryEmbedding", "Round", "STFT", "Scan", "Scatter", "ScatterElements", "ScatterND", "Selu", "SequenceAt",
    "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
    "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss",
    "Softplus", "Softsign", "SpaceToDepth", "Split", "SplitToSequence", "Sqrt", "Squeeze", "StringConcat",
    "StringNormalizer", "StringSplit", "Sub", "Sum", "Tan", "Tanh", "TfIdfVectorizer", "ThresholdedRelu",
    "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample", "Where", "Xor",
};

// The op versions of opsets 18 to 23 (ONNX 1.18): the ops ONNX changed after the opset 17 that
// Debian's ONNX 1.12 stops at. Sorted; from the same wheel, versions 18 <= since_version <= 23.
constexpr std::pair<std::string_view, int> kNewerVersions[] = {
    {"Acos", 22}, {"Acosh", 22}, {"AffineGrid", 20}, {"Asin", 22}, {"Asinh", 22}, {"Atan", 22}, {"Atanh", 22},
    {"Attention", 23}, {"AveragePool", 19}, {"AveragePool", 22}, {"Bernoulli", 22}, {"BitwiseAnd", 18},
    {"BitwiseNot", 18}, {"BitwiseOr", 18}, {"BitwiseXor", 18}, {"Cast", 19}, {"Cast", 21}, {"Cast", 23},
    {"CastLike", 19}, {"CastLike", 21}, {"CastLike", 23}, {"CenterCropPad", 18}, {"Col2Im", 18},
    {"Constant", 19}, {"Constant", 21}, {"Constant", 23}, {"ConstantOfShape", 20}, {"ConstantOfShape", 21},
    {"ConstantOfShape", 23}, {"Conv", 22}, {"ConvTranspose", 22}, {"Cos", 22}, {"Cosh", 22}, {"DFT", 20},
    {"DeformConv", 19}, {"DeformConv", 22}, {"DequantizeLinear", 19}, {"DequantizeLinear", 21},
    {"DequantizeLinear", 23}, {"Det", 22}, {"Dropout", 22}, {"Elu", 22}, {"Equal", 19}, {"EyeLike", 22},
    {"Flatten", 21}, {"Flatten", 23}, {"GRU", 22}, {"Gelu", 20}, {"GlobalAveragePool", 22},
    {"GlobalLpPool", 22}, {"GlobalMaxPool", 22}, {"GridSample", 20}, {"GridSample", 22},
    {"GroupNormalization", 18}, {"GroupNormalization", 21}, {"HardSigmoid", 22}, {"HardSwish", 22},
    {"Identity", 19}, {"Identity", 21}, {"Identity", 23}, {"If", 19}, {"If", 21}, {"If", 23},
    {"ImageDecoder", 20}, {"InstanceNormalization", 22}, {"IsInf", 20}, {"IsNaN", 20}, {"LSTM", 22},
    {"Loop", 19}, {"Loop", 21}, {"Loop", 23}, {"LpNormalization", 22}, {"LpPool", 18}, {"LpPool", 22},
    {"MaxPool", 22}, {"MaxRoiPool", 22}, {"MaxUnpool", 22}, {"Mish", 18}, {"Mish", 22}, {"Multinomial", 22},
    {"NegativeLogLikelihoodLoss", 22}, {"OptionalGetElement", 18}, {"OptionalHasElement", 18}, {"Pad", 18},
    {"Pad", 19}, {"Pad", 21}, {"Pad", 23}, {"QLinearMatMul", 21}, {"QuantizeLinear", 19},
    {"QuantizeLinear", 21}, {"QuantizeLinear", 23}, {"RMSNormalization", 23}, {"RNN", 22}, {"RandomNormal", 22},
    {"RandomNormalLike", 22}, {"RandomUniform", 22}, {"RandomUniformLike", 22}, {"ReduceL1", 18},
    {"ReduceL2", 18}, {"ReduceLogSum", 18}, {"ReduceLogSumExp", 18}, {"ReduceMax", 18}, {"ReduceMax", 20},
    {"ReduceMean", 18}, {"ReduceMin", 18}, {"ReduceMin", 20}, {"ReduceProd", 18}, {"ReduceSumSquare", 18},
    {"RegexFullMatch", 20}, {"Reshape", 19}, {"Reshape", 21}, {"Reshape", 23}, {"Resize", 18}, {"Resize", 19},
    {"RoiAlign", 22}, {"RotaryEmbedding", 23}, {"Round", 22}, {"Scan", 19}, {"Scan", 21}, {"Scan", 23},
    {"ScatterElements", 18}, {"ScatterND", 18}, {"Selu", 22}, {"Shape", 19}, {"Shape", 21}, {"Shape", 23},
    {"Sin", 22}, {"Sinh", 22}, {"Size", 19}, {"Size", 21}, {"Size", 23}, {"Softplus", 22}, {"Softsign", 22},
    {"Split", 18}, {"Squeeze", 21}, {"Squeeze", 23}, {"StringConcat", 20}, {"StringSplit", 20}, {"Tan", 22},
    {"ThresholdedRelu", 22}, {"Transpose", 21}, {"Transpose", 23}, {"Unsqueeze", 21}, {"Unsqueeze", 23},
};

}  // namespace

bool onnx_changed_op_after(std::string_view op_type, int64_t since, int64_t opset) {
  return std::any_of(std::begin(kNewerVersions), std::end(kNewerVersions), [&](const auto& v) {
    return v.first == op_type && v.second > since && v.second <= opset;
  });
}

bool onnx_defines_op(std::string_view op_type) {
  return std::binary_search(kOnnxOps.begin(), kOnnxOps.end(), op_type);
}

}  // namespace vkg
