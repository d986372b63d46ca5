// `surgeon insert`'s reading of --attrs values (runtime/onnx/surgeon_insert.h), as Polygraphy's
// args_util.cast reads them; the insertion itself is checked against Polygraphy in
// tests/cli/test_surgeon_insert.py.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "runtime/core/error.h"
#include "runtime/onnx/surgeon_insert.h"

namespace vkg {
namespace {

using Attr = onnx::AttributeProto;

TEST(SurgeonInsertAttrs, ScalarsAreIntegersFloatsOrStrings) {
  EXPECT_EQ(parse_node_attribute("a", "-2").type(), Attr::INT);
  EXPECT_EQ(parse_node_attribute("a", "-2").i(), -2);
  EXPECT_EQ(parse_node_attribute("a", " 7 ").i(), 7);
  EXPECT_EQ(parse_node_attribute("a", "1e3").type(), Attr::FLOAT);
  EXPECT_FLOAT_EQ(parse_node_attribute("a", "1e3").f(), 1000.0f);
  EXPECT_FLOAT_EQ(parse_node_attribute("a", "0.").f(), 0.0f);
  EXPECT_EQ(parse_node_attribute("a", "'53'").type(), Attr::STRING);
  EXPECT_EQ(parse_node_attribute("a", "'53'").s(), "53");
  EXPECT_EQ(parse_node_attribute("a", "\"NOTSET\"").s(), "NOTSET");
  EXPECT_EQ(parse_node_attribute("a", "0x10").s(), "0x10");  // Python's int() and float() refuse it too
  EXPECT_EQ(parse_node_attribute("a", "").type(), Attr::STRING);
}

TEST(SurgeonInsertAttrs, ListsTakeTheTypeOfTheirItems) {
  const Attr ints = parse_node_attribute("axes", "[0, -1]");
  ASSERT_EQ(ints.type(), Attr::INTS);
  EXPECT_EQ(ints.ints(1), -1);
  const Attr floats = parse_node_attribute("scales", "[1,2.5]");
  ASSERT_EQ(floats.type(), Attr::FLOATS);
  EXPECT_FLOAT_EQ(floats.floats(0), 1.0f);
  const Attr strings = parse_node_attribute("names", "[a,'b']");
  ASSERT_EQ(strings.type(), Attr::STRINGS);
  EXPECT_EQ(strings.strings(1), "b");
  const Attr empty = parse_node_attribute("e", "[]");  // Python: "".split(",") is [""]
  ASSERT_EQ(empty.type(), Attr::STRINGS);
  EXPECT_EQ(empty.strings_size(), 1);
  EXPECT_THROW(parse_node_attribute("m", "[1,a]"), Error);
}

}  // namespace
}  // namespace vkg
