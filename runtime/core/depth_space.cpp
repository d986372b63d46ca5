#include "runtime/core/depth_space.h"

#include "runtime/core/error.h"

namespace vkg {

BlockPermutation depth_space_permutation(const Node& node, const Shape& in) {
  VKG_CHECK(in.size() == 4, node.describe() << ": the input must be 4-D (N x C x H x W), got " << shape_to_string(in));
  const int64_t b = node.attr_int("blocksize");
  VKG_CHECK(b > 0, node.describe() << ": blocksize must be positive, got " << b);
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  BlockPermutation p;
  if (node.op_type == "SpaceToDepth") {
    VKG_CHECK(h % b == 0 && w % b == 0,
              node.describe() << ": blocksize " << b << " does not divide the spatial size " << h << "x" << w);
    p.view = {n, c, h / b, b, w / b, b};
    p.perm = {0, 3, 5, 1, 2, 4};
    p.out_shape = {n, c * b * b, h / b, w / b};
    return p;
  }
  VKG_CHECK(c % (b * b) == 0, node.describe()
                                  << ": blocksize " << b << " squared does not divide the " << c << " channels");
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode == "DCR") {
    p.view = {n, b, b, c / (b * b), h, w};
    p.perm = {0, 3, 4, 1, 5, 2};
  } else {
    VKG_CHECK(mode == "CRD", node.describe() << ": mode must be DCR or CRD, got '" << mode << "'");
    p.view = {n, c / (b * b), b, b, h, w};
    p.perm = {0, 1, 4, 2, 5, 3};
  }
  p.out_shape = {n, c / (b * b), h * b, w * b};
  return p;
}

}  // namespace vkg
