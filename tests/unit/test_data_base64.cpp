#include <gtest/gtest.h>

#include <random>

#include "runtime/data/base64.h"
#include "test_data_util.h"

namespace vkg {
namespace {

TEST(DataBase64, EncodesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(DataBase64, DecodesRfc4648Vectors) {
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_EQ(base64_decode("Zm8="), "fo");
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode("//4A"), std::string("\xff\xfe\x00", 3));
}

TEST(DataBase64, RoundTripsAllByteValues) {
  std::mt19937 rng(5);
  for (size_t n = 0; n < 70; ++n) {
    std::string bytes;
    for (size_t i = 0; i < n; ++i) bytes += char(rng() & 0xff);
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << "length " << n;
  }
}

TEST(DataBase64, RejectsMalformedInput) {
  EXPECT_ERROR_CONTAINS(base64_decode("Zm9"), "not a multiple of 4");
  EXPECT_ERROR_CONTAINS(base64_decode("Zm9v\n"), "not a multiple of 4");
  EXPECT_ERROR_CONTAINS(base64_decode("Zm 9"), "' ' at position 2");
  EXPECT_ERROR_CONTAINS(base64_decode("Zm9v-A=="), "'-' at position 4");
  EXPECT_ERROR_CONTAINS(base64_decode("Z=9v"), "unexpected '=' at position 1");
  EXPECT_ERROR_CONTAINS(base64_decode("Zg==Zg=="), "unexpected '=' at position 2");
  EXPECT_ERROR_CONTAINS(base64_decode("Zg=a"), "after padding");
  EXPECT_ERROR_CONTAINS(base64_decode("Z==="), "unexpected '=' at position 1");
  EXPECT_ERROR_CONTAINS(base64_decode(std::string("Zm9\x80", 4)), "byte 0x80 at position 3");
}

}  // namespace
}  // namespace vkg
