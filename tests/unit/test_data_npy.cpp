#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/data/base64.h"
#include "runtime/core/file_io.h"
#include "runtime/data/npy.h"
#include "test_data_util.h"

namespace vkg {
namespace {

// .npy bytes with a hand-written header (format version major.0).
std::string npy(int major, const std::string& dict, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  const size_t len = dict.size() + 1;
  out += char(len & 0xff);
  out += char((len >> 8) & 0xff);
  if (major > 1) out += std::string(2, '\0');
  return out + dict + "\n" + data;
}

std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += char(v);
  return s;
}

// Every "array" payload (the base64 of .npy bytes) in a Polygraphy JSON document.
void collect_arrays(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    if (j.contains("array") && j["array"].is_string()) out.push_back(base64_decode(j["array"].get<std::string>()));
    for (const auto& [key, value] : j.items()) collect_arrays(value, out);
  } else if (j.is_array()) {
    for (const auto& value : j) collect_arrays(value, out);
  }
}

TEST(DataNpy, WritesNumpyHeaderLayout) {
  const Tensor t = Tensor::from_vector<float>({1, 3, 2, 2}, std::vector<float>(12, 1.0f));
  const std::string bytes = save_npy(t);
  ASSERT_EQ(bytes.size(), 128u + 48u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 2, 2), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.substr(10 + dict.size(), 128 - 11 - dict.size()), std::string(128 - 11 - dict.size(), ' '));
  EXPECT_EQ(bytes[127], '\n');
}

TEST(DataNpy, WritesScalarsAndOneTuples) {
  const std::string scalar = save_npy(Tensor::scalar<Half>(Half(3.0f)));
  EXPECT_NE(scalar.find("{'descr': '<f2', 'fortran_order': False, 'shape': (), }"), std::string::npos);
  EXPECT_EQ(scalar.size(), 128u + 2u);
  const std::string one = save_npy(Tensor::from_vector<int64_t>({3}, {1, 2, 3}));
  EXPECT_NE(one.find("'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  const std::string flags = save_npy(Tensor::from_vector<bool>({2}, {true, false}));
  EXPECT_NE(flags.find("'descr': '|b1'"), std::string::npos);
}

// np.save's output for every dtype and shape kind in the golden file must be reproduced exactly.
TEST(DataNpy, ReproducesNumpyBytesOfGoldenArrays) {
  const auto doc = nlohmann::json::parse(read_whole_file(test::data_dir() + "/polygraphy_golden_multi.json", "golden"));
  std::vector<std::string> arrays;
  collect_arrays(doc, arrays);
  ASSERT_EQ(arrays.size(), 48u);
  for (const auto& bytes : arrays) {
    const Tensor t = load_npy(bytes);
    EXPECT_EQ(save_npy(t), bytes) << t.describe();
  }
}

TEST(DataNpy, RoundTripsEveryDtype) {
  for (DType dt : {DType::Float32, DType::Float16, DType::Float64, DType::Int8, DType::Int16, DType::Int32,
                   DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Bool}) {
    Tensor t(dt, {2, 3});
    for (int64_t i = 0; i < t.size(); ++i) t.set_from_double(i, double(i % 2));
    const Tensor back = load_npy(save_npy(t));
    EXPECT_TRUE(back.bit_equal(t)) << dtype_name(dt);
    EXPECT_EQ(back.dtype(), dt);
    EXPECT_EQ(back.shape(), t.shape());
  }
  const Tensor empty(DType::Float32, {0, 3});
  EXPECT_EQ(load_npy(save_npy(empty)).shape(), (Shape{0, 3}));
}

TEST(DataNpy, ReadsVersion2And3Headers) {
  const std::string data = bytes_of({0, 0, 0x80, 0x3f, 0, 0, 0, 0x40});  // 1.0f, 2.0f
  for (int major : {2, 3}) {
    const Tensor t = load_npy(npy(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data));
    EXPECT_EQ(t.to_doubles(), (std::vector<double>{1.0, 2.0})) << major;
  }
}

TEST(DataNpy, ReadsBigEndianFortranOrderAndVariants) {
  const Tensor be =
      load_npy(npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", bytes_of({0x3f, 0x80, 0, 0})));
  EXPECT_EQ(be.to_doubles(), (std::vector<double>{1.0}));
  // Column-major [[1, 2, 3], [4, 5, 6]] is stored 1 4 2 5 3 6.
  const Tensor f =
      load_npy(npy(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", bytes_of({1, 4, 2, 5, 3, 6})));
  EXPECT_EQ(f.to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  const Tensor py2 = load_npy(
      npy(1, "{\"shape\": (2L,), \"descr\": \"=i2\", \"fortran_order\": False}", bytes_of({7, 0, 0xff, 0xff})));
  EXPECT_EQ(py2.dtype(), DType::Int16);
  EXPECT_EQ(py2.to_doubles(), (std::vector<double>{7, -1}));
  const Tensor flags = load_npy(npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", bytes_of({0, 5})));
  EXPECT_EQ(flags.to_doubles(), (std::vector<double>{0, 1}));
}

TEST(DataNpy, RejectsMalformedData) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  const std::string one = bytes_of({0, 0, 0x80, 0x3f});
  EXPECT_ERROR_CONTAINS(load_npy("hello"), "magic string");
  EXPECT_ERROR_CONTAINS(load_npy(npy(4, ok, one)), "format version 4.0");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, ok, one).substr(0, 30)), "header claims");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, ok, one.substr(0, 3))), "truncated");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, ok, one + "xx")), "2 unexpected trailing bytes");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", one + one)),
                        "unsupported .npy dtype '<c8'");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", one)),
                        "unsupported .npy descr '|O'");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", one)),
                        "unsupported .npy dtype '<U3'");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", one)),
                        "structured dtypes");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<f4', 'shape': (1,), }", one)), "must have 'descr'");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", one)),
                        "non-negative integer");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", one)),
                        "expected True or False");
  EXPECT_ERROR_CONTAINS(load_npy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", one)),
                        "unexpected key 'x'");
  EXPECT_ERROR_CONTAINS(save_npy(Tensor(DType::BFloat16, {1})), "bfloat16");
}

}  // namespace
}  // namespace vkg
