// Conformance cases of the gather family (runtime/tactics/gather.cpp): Gather,
// GatherElements, GatherND, Scatter/ScatterElements, ScatterND (every
// reduction, duplicate indices), Resize/Upsample (every mode, coordinate
// transformation and nearest rounding, cubic options, tf_crop_and_resize with
// extrapolation, 1-D to 4-D, opsets 9/10/11/13), and Range/ConstantOfShape
// with runtime inputs. Indices are int64 and int32, negative ones included;
// sizes are odd where vec4 paths are not, and a few are large enough for many
// workgroups.
#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Valid indices into an axis of `dim` elements, in [-dim, dim) when `negative`.
template <class T = int64_t> Tensor indices(const Shape& shape, int64_t dim, uint32_t seed, bool negative = true) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(negative ? -dim : 0, dim - 1);
  std::vector<T> v(size_t(num_elements(shape)));
  for (T& x : v) x = T(dist(rng));
  return Tensor::from_vector<T>(shape, v);
}

Tensor i64s(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({int64_t(v.size())}, v); }
Tensor f32s(const std::vector<float>& v) { return Tensor::from_vector<float>({int64_t(v.size())}, v); }

std::vector<VkCase> gather_cases() {
  std::vector<VkCase> cases;
  cases.push_back(make_case("Gather axis 1 [4,6,8] int64 [2,3] (vec4)", "Gather",
                            {random_floats({4, 6, 8}, 1), indices({2, 3}, 6, 2)}, {{"axis", int_attr(1)}}));
  cases.push_back(make_case("Gather axis 0 [5,7] int32 [4] (inner 7)", "Gather",
                            {random_floats({5, 7}, 3), indices<int32_t>({4}, 5, 4)}));
  cases.push_back(make_case("Gather axis -1 [10,3] scalar index", "Gather",
                            {random_floats({10, 3}, 5), Tensor::scalar<int64_t>(-2)}, {{"axis", int_attr(-1)}}));
  cases.push_back(make_case("Gather embedding const [500,64] by [4,60]", "Gather",
                            {random_floats({500, 64}, 6), indices({4, 60}, 500, 7, false)}, {}, 1, {0}));
  cases.push_back(make_case("Gather axis 2 [3,4,9,12] [2,2] (vec4, outer 12)", "Gather",
                            {random_floats({3, 4, 9, 12}, 8), indices({2, 2}, 9, 9)}, {{"axis", int_attr(2)}}));
  cases.push_back(make_case("Gather int64 data [6,4] axis 0 const indices", "Gather",
                            {integers<int64_t>({6, 4}, 10, -1000, 1000), i64s({5, -1, 0, 2})}, {}, 1, {1}));
  cases.push_back(make_case("Gather bool data [7,5] axis 1", "Gather", {bools({7, 5}, 11), indices({3}, 5, 12)},
                            {{"axis", int_attr(1)}}));
  cases.push_back(make_case("Gather empty indices [0]", "Gather",
                            {random_floats({5, 8}, 13), Tensor::from_vector<int64_t>({0}, {})}));
  cases.push_back(make_case("Gather large [64,1024] rows [40] (many workgroups)", "Gather",
                            {random_floats({64, 1024}, 14), indices({40}, 64, 15)}));
  return cases;
}

std::vector<VkCase> gather_elements_cases() {
  std::vector<VkCase> cases;
  cases.push_back(make_case("GatherElements axis 1 [3,4,5] by [3,2,5]", "GatherElements",
                            {random_floats({3, 4, 5}, 20), indices({3, 2, 5}, 4, 21)}, {{"axis", int_attr(1)}}));
  cases.push_back(make_case("GatherElements axis 0 [4,6] by smaller [2,3]", "GatherElements",
                            {random_floats({4, 6}, 22), indices<int32_t>({2, 3}, 4, 23)}));
  cases.push_back(make_case("GatherElements axis -1 int32 [5,7] by [5,9]", "GatherElements",
                            {integers<int32_t>({5, 7}, 24, -50, 50), indices({5, 9}, 7, 25)},
                            {{"axis", int_attr(-1)}}));
  cases.push_back(make_case("GatherElements axis 2 [2,3,40,33] by [2,3,50,33]", "GatherElements",
                            {random_floats({2, 3, 40, 33}, 26), indices({2, 3, 50, 33}, 40, 27)},
                            {{"axis", int_attr(2)}}));
  return cases;
}

std::vector<VkCase> gather_nd_cases() {
  std::vector<VkCase> cases;
  cases.push_back(
      make_case("GatherND [4,5,6] by [3,2]", "GatherND",
                {random_floats({4, 5, 6}, 30), Tensor::from_vector<int64_t>({3, 2}, {0, 1, 3, -1, -4, 4})}));
  cases.push_back(make_case("GatherND batch_dims 1 [2,3,4] by [2,2,1]", "GatherND",
                            {random_floats({2, 3, 4}, 31), indices({2, 2, 1}, 3, 32)}, {{"batch_dims", int_attr(1)}}));
  cases.push_back(
      make_case("GatherND full depth [5,6] by int32 [4,2]", "GatherND",
                {random_floats({5, 6}, 33), Tensor::from_vector<int32_t>({4, 2}, {0, 0, -1, -1, 4, 2, -5, 3})}));
  cases.push_back(make_case("GatherND batch_dims 2 int64 data [2,3,5,4] by [2,3,6,1]", "GatherND",
                            {integers<int64_t>({2, 3, 5, 4}, 34, -9, 9), indices({2, 3, 6, 1}, 5, 35)},
                            {{"batch_dims", int_attr(2)}}));
  cases.push_back(make_case("GatherND [64,32,16] by [30,7,1] (many workgroups)", "GatherND",
                            {random_floats({64, 32, 16}, 36), indices({30, 7, 1}, 64, 37)}));
  return cases;
}

VkCase scatter_elements(const std::string& name, const Shape& data, const Shape& idx, int64_t axis,
                        const std::string& reduction, int64_t opset, uint32_t seed) {
  const int64_t dim = data[size_t(axis < 0 ? axis + int64_t(data.size()) : axis)];
  Attrs attrs{{"axis", int_attr(axis)}};
  if (reduction != "none") attrs["reduction"] = string_attr(reduction);
  return at_opset(
      make_case(name, "ScatterElements",
                {random_floats(data, seed), indices(idx, dim, seed + 1), random_floats(idx, seed + 2)}, attrs),
      opset);
}

std::vector<VkCase> scatter_elements_cases() {
  std::vector<VkCase> cases;
  // Few slots along the axis and many updates: duplicates are certain.
  cases.push_back(
      scatter_elements("ScatterElements axis 0 [3,5] by [6,5] none (duplicates)", {3, 5}, {6, 5}, 0, "none", 13, 40));
  cases.push_back(
      scatter_elements("ScatterElements axis 1 [4,6,3] by [2,9,2] none", {4, 6, 3}, {2, 9, 2}, 1, "none", 13, 41));
  cases.push_back(scatter_elements("ScatterElements axis -1 [5,4] by [5,7] add", {5, 4}, {5, 7}, -1, "add", 16, 42));
  cases.push_back(scatter_elements("ScatterElements axis 0 [4,6] by [5,6] mul", {4, 6}, {5, 6}, 0, "mul", 16, 43));
  cases.push_back(scatter_elements("ScatterElements axis 1 [3,5] by [3,8] max", {3, 5}, {3, 8}, 1, "max", 18, 44));
  cases.push_back(scatter_elements("ScatterElements axis 1 [3,5] by [2,8] min", {3, 5}, {2, 8}, 1, "min", 18, 45));
  cases.push_back(scatter_elements("ScatterElements axis 1 [64,300] by [64,200] none (many lines)", {64, 300},
                                   {64, 200}, 1, "none", 13, 46));
  {
    VkCase c = make_case(
        "ScatterElements int32 axis 0 [6,4] by [8,4] add", "ScatterElements",
        {integers<int32_t>({6, 4}, 47, -20, 20), indices({8, 4}, 6, 48), integers<int32_t>({8, 4}, 49, -20, 20)},
        {{"reduction", string_attr("add")}});
    cases.push_back(at_opset(c, 16));
  }
  for (const char* r : {"add", "mul"}) {
    VkCase c = make_case(std::string("ScatterElements bool axis 1 [4,5] by [4,6] ") + r, "ScatterElements",
                         {bools({4, 5}, 50), indices({4, 6}, 5, 51), bools({4, 6}, 52)},
                         {{"axis", int_attr(1)}, {"reduction", string_attr(r)}});
    cases.push_back(at_opset(c, 16));
  }
  {
    VkCase c = make_case(
        "ScatterElements int64 axis 0 [5,3] by [7,3] max", "ScatterElements",
        {integers<int64_t>({5, 3}, 53, -99, 99), indices({7, 3}, 5, 54), integers<int64_t>({7, 3}, 55, -99, 99)},
        {{"reduction", string_attr("max")}});
    cases.push_back(at_opset(c, 18));
  }
  {
    VkCase c = make_case("Scatter (opset 10) axis 1 [4,6] by [4,3]", "Scatter",
                         {random_floats({4, 6}, 56), indices<int32_t>({4, 3}, 6, 57), random_floats({4, 3}, 58)},
                         {{"axis", int_attr(1)}});
    cases.push_back(at_opset(c, 10));
  }
  {
    VkCase c = make_case("ScatterElements const data [5,4] by [3,4]", "ScatterElements",
                         {random_floats({5, 4}, 59), indices({3, 4}, 5, 60), random_floats({3, 4}, 61)}, {}, 1, {0});
    cases.push_back(at_opset(c, 13));
  }
  return cases;
}

VkCase scatter_nd(const std::string& name, const Shape& data, Tensor idx, const std::string& reduction, int64_t opset,
                  uint32_t seed) {
  Shape updates(idx.shape().begin(), idx.shape().end() - 1);
  updates.insert(updates.end(), data.begin() + idx.shape().back(), data.end());
  Attrs attrs;
  if (reduction != "none") attrs["reduction"] = string_attr(reduction);
  return at_opset(
      make_case(name, "ScatterND", {random_floats(data, seed), idx, random_floats(updates, seed + 1)}, attrs), opset);
}

std::vector<VkCase> scatter_nd_cases() {
  std::vector<VkCase> cases;
  cases.push_back(scatter_nd("ScatterND [4,5,6] by [3,1] rows", {4, 5, 6},
                             Tensor::from_vector<int64_t>({3, 1}, {2, -1, 0}), "none", 13, 70));
  cases.push_back(scatter_nd("ScatterND [4,5,6] by [2,2,2] none (duplicate tuples)", {4, 5, 6},
                             Tensor::from_vector<int64_t>({2, 2, 2}, {1, 2, 3, 0, 1, -3, -1, 4}), "none", 13, 71));
  cases.push_back(scatter_nd("ScatterND [4,6] by [5,1] add (duplicates)", {4, 6},
                             Tensor::from_vector<int64_t>({5, 1}, {1, 3, 1, -3, 0}), "add", 16, 72));
  cases.push_back(scatter_nd("ScatterND [6,7] full depth by [9,2] mul", {6, 7}, indices({9, 2}, 6, 73), "mul", 16, 74));
  cases.push_back(scatter_nd("ScatterND [6,7] full depth by [9,2] max", {6, 7}, indices({9, 2}, 6, 75), "max", 18, 76));
  cases.push_back(scatter_nd("ScatterND [6,7] full depth by [9,2] min", {6, 7}, indices({9, 2}, 6, 77), "min", 18, 78));
  cases.push_back(scatter_nd("ScatterND [2,64,256] by [2,8,2] (wide slices)", {2, 64, 256},
                             indices({2, 8, 2}, 2, 79, false), "none", 13, 80));
  {
    VkCase c = make_case(
        "ScatterND int32 [5,3] by int32 [4,1] add", "ScatterND",
        {integers<int32_t>({5, 3}, 81, -9, 9), indices<int32_t>({4, 1}, 5, 82), integers<int32_t>({4, 3}, 83, -9, 9)},
        {{"reduction", string_attr("add")}});
    cases.push_back(at_opset(c, 16));
  }
  {
    VkCase c = make_case("ScatterND const zero data [8,4] by [3,1]", "ScatterND",
                         {Tensor::from_vector<float>({8, 4}, std::vector<float>(32, 0.0f)),
                          Tensor::from_vector<int64_t>({3, 1}, {7, 0, 3}), random_floats({3, 4}, 84)},
                         {}, 1, {0});
    cases.push_back(at_opset(c, 13));
  }
  return cases;
}

// Resize-13 with constant scales (nullopt: sizes instead) and attributes.
VkCase resize(const std::string& name, const Shape& x, std::optional<std::vector<float>> scales,
              std::optional<std::vector<int64_t>> sizes, Attrs attrs, uint32_t seed,
              std::optional<std::vector<float>> roi = std::nullopt) {
  std::vector<std::optional<Tensor>> inputs = {random_floats(x, seed), std::nullopt, std::nullopt, std::nullopt};
  std::set<size_t> constants;
  if (roi) inputs[1] = f32s(*roi), constants.insert(1);
  if (scales) inputs[2] = f32s(*scales), constants.insert(2);
  if (sizes) inputs[3] = i64s(*sizes), constants.insert(3);
  if (!roi && sizes) inputs[1] = f32s({}), inputs[2] = f32s({});  // empty roi/scales in front of sizes
  if (!roi && sizes) constants.insert({1, 2});
  return make_case(name, "Resize", inputs, std::move(attrs), 1, constants);
}

Attrs resize_attrs(const std::string& mode, const std::string& coordinates, const std::string& nearest = "") {
  Attrs a{{"mode", string_attr(mode)}, {"coordinate_transformation_mode", string_attr(coordinates)}};
  if (!nearest.empty()) a["nearest_mode"] = string_attr(nearest);
  return a;
}

std::vector<VkCase> resize_cases() {
  std::vector<VkCase> cases;
  const char* kCoordinates[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const std::vector<float> roi = {0, 0, 0.1f, -0.2f, 1, 1, 0.9f, 1.3f};  // some columns fall outside

  // Whole-factor nearest upsampling (resize.nearest_int) in the usual spellings.
  cases.push_back(resize("Resize nearest x2 [1,3,8,10] half_pixel", {1, 3, 8, 10}, std::vector<float>{1, 1, 2, 2},
                         std::nullopt, {}, 100));
  cases.push_back(resize("Resize nearest x2,x3 [2,4,16,16] asymmetric floor", {2, 4, 16, 16},
                         std::vector<float>{1, 1, 2, 3}, std::nullopt, resize_attrs("nearest", "asymmetric", "floor"),
                         101));
  cases.push_back(resize("Resize nearest sizes [1,2,5,3] -> [1,2,10,12]", {1, 2, 5, 3}, std::nullopt,
                         std::vector<int64_t>{1, 2, 10, 12}, {}, 102));
  // The rows form (vec4 rows, the last two axes growing by up to 4 along the last).
  cases.push_back(resize("Resize nearest x1,x2 [1,2,3,8] rows", {1, 2, 3, 8}, std::vector<float>{1, 1, 1, 2},
                         std::nullopt, {}, 103));
  cases.push_back(resize("Resize nearest x3,x4 [2,3,4,4] rows", {2, 3, 4, 4}, std::vector<float>{1, 1, 3, 4},
                         std::nullopt, resize_attrs("nearest", "asymmetric", "floor"), 104));
  // One element an invocation, copied into whole vec4s (x8 across rows of 5; PP-OCRv4 det's 10x10 -> 80x80).
  cases.push_back(resize("Resize nearest x2,x8 [1,3,5,5] single elements", {1, 3, 5, 5}, std::vector<float>{1, 1, 2, 8},
                         std::nullopt, resize_attrs("nearest", "asymmetric", "floor"), 105));
  // Every coordinate transformation with every nearest rounding, up and down, fractional factors.
  uint32_t seed = 110;
  for (const char* c : kCoordinates) {
    for (const char* n : kNearest) {
      const bool crop = std::string(c) == "tf_crop_and_resize";
      Attrs a = resize_attrs("nearest", c, n);
      if (crop) a["extrapolation_value"] = float_attr(-7.5f);
      cases.push_back(resize(std::string("Resize nearest ") + c + " " + n + " [1,2,5,7] -> sizes [1,2,8,4]",
                             {1, 2, 5, 7}, std::nullopt, std::vector<int64_t>{1, 2, 8, 4}, a, seed++,
                             crop ? std::optional(roi) : std::nullopt));
      if (std::string(n) == "round_prefer_floor" || std::string(n) == "ceil")
        cases.push_back(resize(std::string("Resize nearest ") + c + " " + n + " [1,1,6,9] scales 1.5,0.7", {1, 1, 6, 9},
                               std::vector<float>{1, 1, 1.5f, 0.7f}, std::nullopt, a, seed++,
                               crop ? std::optional(roi) : std::nullopt));
    }
  }
  // Linear: resize.bilinear where only the last two axes change.
  for (const char* c : kCoordinates) {
    const bool crop = std::string(c) == "tf_crop_and_resize";
    Attrs a = resize_attrs("linear", c);
    if (crop) a["extrapolation_value"] = float_attr(2.25f);
    cases.push_back(resize(std::string("Resize linear ") + c + " [2,3,6,8] scales 2,1.5", {2, 3, 6, 8},
                           std::vector<float>{1, 1, 2, 1.5f}, std::nullopt, a, seed++,
                           crop ? std::optional(roi) : std::nullopt));
    cases.push_back(resize(std::string("Resize linear ") + c + " [1,2,9,7] -> sizes [1,2,4,5]", {1, 2, 9, 7},
                           std::nullopt, std::vector<int64_t>{1, 2, 4, 5}, a, seed++,
                           crop ? std::optional(roi) : std::nullopt));
  }
  cases.push_back(resize("Resize linear 3-D axes [1,4,5,6] scales 1.5,2,0.5", {1, 4, 5, 6},
                         std::vector<float>{1, 1.5f, 2, 0.5f}, std::nullopt, resize_attrs("linear", "half_pixel"),
                         150));
  cases.push_back(resize("Resize linear 1-D [10] -> sizes [17] align_corners", {10}, std::nullopt,
                         std::vector<int64_t>{17}, resize_attrs("linear", "align_corners"), 151));
  cases.push_back(resize("Resize linear 2-D [7,9] scales 0.6,1.8", {7, 9}, std::vector<float>{0.6f, 1.8f}, std::nullopt,
                         resize_attrs("linear", "pytorch_half_pixel"), 152));
  cases.push_back(resize("Resize linear [1,8,32,32] x2 (many workgroups)", {1, 8, 32, 32},
                         std::vector<float>{1, 1, 2, 2}, std::nullopt, resize_attrs("linear", "half_pixel"), 153));
  // Cubic: coefficient, exclude_outside, coordinate transformations.
  for (const char* c : kCoordinates) {
    const bool crop = std::string(c) == "tf_crop_and_resize";
    Attrs a = resize_attrs("cubic", c);
    if (crop) a["extrapolation_value"] = float_attr(1.0f);
    cases.push_back(resize(std::string("Resize cubic ") + c + " [1,2,6,7] scales 1.7,2.3", {1, 2, 6, 7},
                           std::vector<float>{1, 1, 1.7f, 2.3f}, std::nullopt, a, seed++,
                           crop ? std::optional(roi) : std::nullopt));
  }
  {
    Attrs a = resize_attrs("cubic", "half_pixel");
    a["cubic_coeff_a"] = float_attr(-0.5f);
    a["exclude_outside"] = int_attr(1);
    cases.push_back(resize("Resize cubic a=-0.5 exclude_outside [1,1,8,5] -> sizes [1,1,5,11]", {1, 1, 8, 5},
                           std::nullopt, std::vector<int64_t>{1, 1, 5, 11}, a, 160));
    cases.push_back(resize("Resize cubic exclude_outside 3-D [3,6,5] scales 0.8,1.4,2", {3, 6, 5},
                           std::vector<float>{0.8f, 1.4f, 2}, std::nullopt, a, 161));
  }
  // Integer data (nearest only), sizes computed at run time, legacy opsets.
  {
    VkCase c =
        make_case("Resize nearest int32 [1,1,4,5] x2", "Resize",
                  {integers<int32_t>({1, 1, 4, 5}, 170, -100, 100), f32s({}), f32s({1, 1, 2, 2})}, {}, 1, {1, 2});
    cases.push_back(c);
  }
  {
    VkCase c = make_case("Resize nearest tf_crop_and_resize int64 [1,1,5,6] extrapolation 9", "Resize",
                         {integers<int64_t>({1, 1, 5, 6}, 171, -100, 100), f32s(roi), std::nullopt, i64s({1, 1, 4, 7})},
                         resize_attrs("nearest", "tf_crop_and_resize"), 1, {1, 3});
    c.node.attrs["extrapolation_value"] = float_attr(9.0f);
    cases.push_back(c);
  }
  cases.push_back(make_case("Resize linear runtime sizes [1,2,6,5] -> [1,2,9,8]", "Resize",
                            {random_floats({1, 2, 6, 5}, 172), f32s({}), f32s({}), i64s({1, 2, 9, 8})},
                            resize_attrs("linear", "asymmetric"), 1, {1, 2}));
  cases.push_back(at_opset(make_case("Resize-10 nearest [1,2,4,6] scales 2,0.5", "Resize",
                                     {random_floats({1, 2, 4, 6}, 173), f32s({1, 1, 2, 0.5f})}, {}, 1, {1}),
                           10));
  cases.push_back(at_opset(
      make_case("Resize-10 linear [1,2,4,6] scales 1.5,2", "Resize",
                {random_floats({1, 2, 4, 6}, 174), f32s({1, 1, 1.5f, 2})}, {{"mode", string_attr("linear")}}, 1, {1}),
      10));
  cases.push_back(at_opset(
      resize("Resize-11 cubic align_corners [1,1,5,5] scales 2,2", {1, 1, 5, 5}, std::vector<float>{1, 1, 2, 2},
             std::nullopt, resize_attrs("cubic", "align_corners"), 175, std::vector<float>{}),
      11));
  cases.push_back(at_opset(make_case("Upsample-9 nearest [1,2,3,4] scales 2,3", "Upsample",
                                     {random_floats({1, 2, 3, 4}, 176), f32s({1, 1, 2, 3})}, {}, 1, {1}),
                           9));
  cases.push_back(
      at_opset(make_case("Upsample-7 linear [1,2,4,4] scales attr 2,2", "Upsample", {random_floats({1, 2, 4, 4}, 177)},
                         {{"mode", string_attr("linear")}, {"scales", floats_attr({1, 1, 2, 2})}}),
               7));
  cases.push_back(resize("Resize linear to an empty output [1,1,4,4] scales 0.2", {1, 1, 4, 4},
                         std::vector<float>{1, 1, 0.2f, 1}, std::nullopt, resize_attrs("linear", "half_pixel"), 179));
  cases.push_back(resize("Resize nearest x2 [1,16,32,32] (many workgroups)", {1, 16, 32, 32},
                         std::vector<float>{1, 1, 2, 2}, std::nullopt, {}, 178));
  return cases;
}

std::vector<VkCase> generator_cases() {
  std::vector<VkCase> cases;
  cases.push_back(make_case("Range float runtime 1.5..10.2 step 0.7", "Range",
                            {Tensor::scalar<float>(1.5f), Tensor::scalar<float>(10.2f), Tensor::scalar<float>(0.7f)}));
  cases.push_back(make_case("Range int32 runtime 10..-7 step -3", "Range",
                            {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(-7), Tensor::scalar<int32_t>(-3)}));
  cases.push_back(make_case("Range int64 runtime limit 0..300 step 1", "Range",
                            {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(300), Tensor::scalar<int64_t>(1)}, {},
                            1, {0, 2}));
  cases.push_back(make_case("ConstantOfShape runtime [2,3,4] float 1.5", "ConstantOfShape", {i64s({2, 3, 4})},
                            {{"value", tensor_attr(f32s({1.5f}))}}));
  cases.push_back(make_case("ConstantOfShape runtime [70,40] default zero", "ConstantOfShape", {i64s({70, 40})}));
  cases.push_back(make_case("ConstantOfShape runtime [5] int64 -7", "ConstantOfShape", {i64s({5})},
                            {{"value", tensor_attr(i64s({-7}))}}));
  {
    Tensor one_true(DType::Bool, {1});
    one_true.data<bool>()[0] = true;
    cases.push_back(make_case("ConstantOfShape runtime [3,2] bool true", "ConstantOfShape", {i64s({3, 2})},
                              {{"value", tensor_attr(one_true)}}));
  }
  return cases;
}

}  // namespace

// GridSample: every mode (both spellings) and padding, with and without align_corners,
// 4-D (opset 16), 5-D and 3-D (opset 20) inputs; grid points reach past [-1, 1] so that
// padding and (repeated) reflection take effect.
std::vector<VkCase> grid_sample_cases() {
  std::vector<VkCase> cases;
  const auto gs = [](const std::string& name, int64_t opset, const Shape& x, const Shape& grid, const std::string& mode,
                     const std::string& padding, int align, uint32_t seed, float reach = 1.3f) {
    VkCase c = make_case(
        name, "GridSample", {random_floats(x, seed), random_floats(grid, seed + 1, -reach, reach)},
        {{"mode", string_attr(mode)}, {"padding_mode", string_attr(padding)}, {"align_corners", int_attr(align)}});
    c.opset = opset;
    return c;
  };
  cases.push_back(
      gs("GridSample bilinear zeros, 2x3x5x7", 16, {2, 3, 5, 7}, {2, 4, 6, 2}, "bilinear", "zeros", 0, 500));
  cases.push_back(
      gs("GridSample bicubic border align, 1x2x6x5", 16, {1, 2, 6, 5}, {1, 3, 4, 2}, "bicubic", "border", 1, 502));
  cases.push_back(gs("GridSample nearest reflection, 1x3x4x6", 16, {1, 3, 4, 6}, {1, 5, 5, 2}, "nearest", "reflection",
                     0, 504, 3.5f));
  cases.push_back(gs("GridSample bicubic reflection, 1x2x5x5", 16, {1, 2, 5, 5}, {1, 4, 3, 2}, "bicubic", "reflection",
                     0, 506, 2.5f));
  cases.push_back(gs("GridSample linear reflection align 5-D, 1x2x3x4x5", 20, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 3},
                     "linear", "reflection", 1, 508, 2.0f));
  cases.push_back(
      gs("GridSample cubic zeros 5-D, 1x1x4x4x4", 20, {1, 1, 4, 4, 4}, {1, 2, 2, 3, 3}, "cubic", "zeros", 0, 510));
  cases.push_back(gs("GridSample nearest border align 5-D, 2x2x3x3x3", 20, {2, 2, 3, 3, 3}, {2, 2, 2, 2, 3}, "nearest",
                     "border", 1, 512));
  cases.push_back(gs("GridSample linear zeros 3-D, 2x3x9", 20, {2, 3, 9}, {2, 5, 1}, "linear", "zeros", 0, 514));
  return cases;
}

// AffineGrid (opset 20): 2-D and 3-D grids, with and without align_corners, a size 1 axis;
// the size is a build-time constant, theta is data.
std::vector<VkCase> affine_grid_cases() {
  std::vector<VkCase> cases;
  const auto ag = [](const std::string& name, std::vector<int64_t> size, int align, uint32_t seed) {
    const int64_t r = int64_t(size.size()) - 2;
    VkCase c = make_case(name, "AffineGrid", {random_floats({size[0], r, r + 1}, seed, -1.5f, 1.5f), i64s(size)},
                         {{"align_corners", int_attr(align)}}, 1, {1});
    c.opset = 20;
    return c;
  };
  cases.push_back(ag("AffineGrid 2-D 2x3x5x7", {2, 3, 5, 7}, 0, 520));
  cases.push_back(ag("AffineGrid 2-D align 3x1x9x4", {3, 1, 9, 4}, 1, 522));
  cases.push_back(ag("AffineGrid 3-D 2x2x3x4x5", {2, 2, 3, 4, 5}, 0, 524));
  cases.push_back(ag("AffineGrid 3-D align 1x1x4x1x6", {1, 1, 4, 1, 6}, 1, 526));
  cases.push_back(ag("AffineGrid 2-D 4x2x32x40 (many workgroups)", {4, 2, 32, 40}, 0, 528));
  return cases;
}

VKG_VK_CASES(gather) {
  std::vector<VkCase> cases;
  for (auto* family : {gather_cases, gather_elements_cases, gather_nd_cases, scatter_elements_cases, scatter_nd_cases,
                       resize_cases, generator_cases, grid_sample_cases,
                       affine_grid_cases}) {
    std::vector<VkCase> more = family();
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

}  // namespace vkg::test
