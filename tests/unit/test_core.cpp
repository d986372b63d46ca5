// Tensor, dtype and graph-IR basics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {
namespace {

TEST(DType, HalfRoundTripsExactValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0.00006103515625f, 5.960464477539063e-08f})
    EXPECT_EQ(float(Half(f)), f) << f;
  EXPECT_TRUE(std::isinf(float(Half(70000.0f))));
  EXPECT_TRUE(std::isnan(float(Half(std::numeric_limits<float>::quiet_NaN()))));
  // Round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(float(Half(1.0f + 0.00048828125f)), 1.0f);
}

TEST(DType, OnnxCodesRoundTrip) {
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int8, DType::Int16,
                   DType::Int32, DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Bool})
    EXPECT_EQ(dtype_from_onnx(dtype_to_onnx(dt)), dt);
  EXPECT_FALSE(dtype_from_onnx(8).has_value());  // STRING
  EXPECT_EQ(dtype_from_name("fp16"), DType::Float16);
  EXPECT_FALSE(dtype_from_name("float17").has_value());
}

TEST(Tensor, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}), (Shape{5}));
  EXPECT_THROW(broadcast_shapes({2, 3}, {4}), Error);
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
}

TEST(Tensor, TypedAccessIsChecked) {
  Tensor t(DType::Float32, {2, 2});
  EXPECT_EQ(t.size(), 4);
  EXPECT_EQ(t.nbytes(), 16u);
  EXPECT_THROW(t.data<int64_t>(), Error);
  EXPECT_THROW(Tensor(DType::Float32, {-1}), Error);
  EXPECT_THROW(t.reshaped({3}), Error);
}

TEST(Tensor, CastFollowsNumpy) {
  Tensor f = Tensor::from_vector<float>({4}, {1.7f, -1.7f, 0.0f, 3.0f});
  EXPECT_EQ(f.cast(DType::Int32).to_int64s(), (std::vector<int64_t>{1, -1, 0, 3}));
  EXPECT_EQ(f.cast(DType::Bool).to_int64s(), (std::vector<int64_t>{1, 1, 0, 1}));
  Tensor big = Tensor::from_vector<int64_t>({1}, {(int64_t(1) << 62) + 1});
  EXPECT_EQ(big.cast(DType::UInt64).cast(DType::Int64).to_int64s()[0], (int64_t(1) << 62) + 1);
}

TEST(Graph, AttributeGettersNameTheNode) {
  Node n;
  n.name = "conv1";
  n.op_type = "Conv";
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = {1, 1};
  n.attrs["strides"] = a;
  EXPECT_EQ(n.attr_ints("strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(n.attr_int("group", 1), 1);
  try {
    n.attr_int("strides", 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv1"), std::string::npos);
  }
}

}  // namespace
}  // namespace vkg
