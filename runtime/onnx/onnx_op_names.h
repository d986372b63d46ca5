// The names of the ops ONNX defines in its own domain up to opset 23 (ONNX 1.18), whatever the
// ONNX library vkgraphy is built with knows (Debian's 1.12 stops at opset 17): for telling an op of
// a newer ONNX from one that does not exist (check lint warns about the first, fails the second).
#pragma once

#include <cstdint>
#include <string_view>

namespace vkg {

bool onnx_defines_op(std::string_view op_type);
// Whether ONNX has a version of the op newer than `since` and at most `opset` (up to opset 23): a
// model of that opset may use a form the older schema refuses.
bool onnx_changed_op_after(std::string_view op_type, int64_t since, int64_t opset);

}  // namespace vkg
