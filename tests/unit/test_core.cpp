// Tensor, dtype and graph-IR basics.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

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

// The whole-array conversions (F16C where the CPU has it) give the bits the one-at-a-time ones give:
// every half, and floats across their range with the edges (rounding ties, subnormals, overflow,
// NaNs), in arrays whose length is no multiple of eight.
TEST(DType, ArrayConversionsMatchTheScalarOnes) {
  std::vector<uint16_t> halves(65536 + 3);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = uint16_t(i);
  std::vector<float> floats(halves.size());
  halves_to_floats(halves.data(), floats.data(), halves.size());
  for (size_t i = 0; i < halves.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(floats[i]), std::bit_cast<uint32_t>(half_to_float(halves[i]))) << i;

  std::vector<float> values;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 40009) values.push_back(std::bit_cast<float>(uint32_t(b)));
  for (float f : {1.0f + 0.00048828125f, 1.0f + 3 * 0.00048828125f, 65504.0f, 65519.99f, 65520.0f, 6.0e-8f, 2.98e-8f,
                  2.9802322e-08f, 6.1035156e-05f, 6.1035149e-05f, -0.0f, std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN()})
    values.push_back(f);
  std::vector<uint16_t> out(values.size());
  floats_to_halves(values.data(), out.data(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(out[i], float_to_half(values[i])) << std::hex << std::bit_cast<uint32_t>(values[i]);

  // NaNs stay NaNs, quiet, with the top of their payload (as F16C converts them).
  EXPECT_EQ(float_to_half(std::bit_cast<float>(0x7f800001u)), 0x7e00u);
  EXPECT_EQ(float_to_half(std::bit_cast<float>(0xffa02000u)), 0xff01u);
  EXPECT_EQ(std::bit_cast<uint32_t>(half_to_float(0x7c01u)), 0x7fc02000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(half_to_float(0xfe00u)), 0xffc00000u);
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
