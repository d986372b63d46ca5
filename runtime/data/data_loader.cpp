#include "runtime/data/data_loader.h"

#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "runtime/core/logger.h"
#include "runtime/data/numpy_random.h"
#include "runtime/data/run_results.h"

namespace vkg {

namespace {

// What to generate for one graph input, resolved once for all iterations.
struct InputSpec {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  // Set for shape tensors: the values to feed instead of random data.
  std::optional<std::vector<int64_t>> values;
};

bool has_dynamic_dim(const std::vector<Dim>& dims) {
  for (const auto& d : dims) {
    if (!d.known()) return true;
  }
  return false;
}

// Whether `shape` may stand for the declared dims: same rank, equal static dims.
bool fits(const Shape& shape, const std::vector<Dim>& dims) {
  if (shape.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].known() && dims[i].value != shape[i]) return false;
  }
  return true;
}

InputSpec resolve_input(const ValueInfo& input, const DataLoaderOptions& options) {
  InputSpec spec;
  spec.name = input.name;
  VKG_CHECK(input.dtype,
            "input '" << input.name << "' has an unknown or unsupported data type; cannot make data for it");
  spec.dtype = *input.dtype;

  const auto user = options.input_shapes.find(input.name);
  if (user != options.input_shapes.end()) {
    for (int64_t d : user->second) {
      VKG_CHECK(d >= 0, "input '" << input.name << "': shape " << shape_to_string(user->second)
                                  << " from --input-shapes has a negative dimension");
    }
    if (!input.shape || fits(user->second, *input.shape)) {
      spec.shape = user->second;
      return spec;
    }
    // A 1-D integer input of static length N given an N-dim shape is a shape tensor.
    const auto& dims = *input.shape;
    if (is_integer(spec.dtype) && dims.size() == 1 && dims[0].known() &&
        dims[0].value == int64_t(user->second.size())) {
      VKG_INFO("Input tensor: " << input.name << " | Assuming it is a shape tensor; setting its values to "
                                << shape_to_string(user->second));
      spec.shape = {dims[0].value};
      spec.values = user->second;
      return spec;
    }
    VKG_THROW("input '" << input.name << "': shape " << shape_to_string(user->second)
                        << " from --input-shapes does not fit the model's " << input.describe());
  }

  VKG_CHECK(input.shape, "input '" << input.name << "' has an unknown rank; give its shape with --input-shapes");
  for (const auto& d : *input.shape) spec.shape.push_back(d.known() ? d.value : 1);
  if (has_dynamic_dim(*input.shape)) {
    VKG_WARNING("Input tensor: " << input.name << " [" << input.describe()
                                 << "] | Will generate data of shape: " << shape_to_string(spec.shape)
                                 << ".\nIf this is incorrect, please provide its shape with --input-shapes");
  }
  return spec;
}

std::vector<InputSpec> resolve_inputs(const std::vector<ValueInfo>& graph_inputs, const DataLoaderOptions& options) {
  std::vector<InputSpec> specs;
  std::set<std::string> names;
  for (const auto& input : graph_inputs) {
    specs.push_back(resolve_input(input, options));
    names.insert(input.name);
  }
  for (const auto& [name, shape] : options.input_shapes) {
    if (!names.count(name)) {
      VKG_WARNING("Input tensor: " << name << " | A shape was provided, but the model has no such input");
    }
  }
  for (const auto& [name, range] : options.val_range) {
    if (!name.empty() && !names.count(name)) {
      VKG_WARNING("Input tensor: " << name << " | A value range was provided, but the model has no such input");
    }
  }
  return specs;
}

std::pair<double, double> value_range(const std::string& name, const DataLoaderOptions& options) {
  if (auto it = options.val_range.find(name); it != options.val_range.end()) return it->second;
  if (auto it = options.val_range.find(""); it != options.val_range.end()) return it->second;
  return {0.0, 1.0};
}

// numpy's float64 -> float16 conversion (one rounding, to nearest even).
uint16_t double_to_half_bits(double value) {
  const uint64_t x = std::bit_cast<uint64_t>(value);
  const auto sign = uint16_t((x >> 48) & 0x8000u);
  const uint64_t abs = x & 0x7fffffffffffffffull;
  if (abs >= 0x7ff0000000000000ull) return uint16_t(sign | 0x7c00u | (abs > 0x7ff0000000000000ull ? 0x200u : 0u));
  if (abs >= std::bit_cast<uint64_t>(65520.0)) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (abs < std::bit_cast<uint64_t>(0x1p-14)) {  // subnormal in half: round at 2^-24 granularity
    return uint16_t(sign | uint16_t(std::nearbyint(std::bit_cast<double>(abs) * 0x1p24)));
  }
  const uint64_t mantissa = abs & ((uint64_t(1) << 52) - 1);
  const uint64_t exponent = (abs >> 52) - (1023 - 15);
  auto h = uint32_t((exponent << 10) | (mantissa >> 42));
  const uint64_t rest = mantissa & ((uint64_t(1) << 42) - 1);
  const uint64_t half_way = uint64_t(1) << 41;
  if (rest > half_way || (rest == half_way && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

void fill_floats(Tensor& t, NumpyRandomState& rng, std::pair<double, double> range) {
  // Infinite bounds are scaled like Polygraphy does so that they survive (inf - inf would be NaN).
  double scale = range.second - range.first;
  double shift = range.first;
  if (std::isinf(range.first)) {
    scale = range.first;
    shift = 0;
  }
  if (std::isinf(range.second)) scale = range.second;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = rng.random_sample() * scale + shift;
    switch (t.dtype()) {
      case DType::Float32:
        t.data<float>()[i] = float(v);
        break;
      case DType::Float64:
        t.data<double>()[i] = v;
        break;
      case DType::Float16:
        t.data<Half>()[i].bits = double_to_half_bits(v);
        break;
      case DType::BFloat16:
        t.data<BFloat16>()[i] = BFloat16(float(v));
        break;
      case DType::Int8:
      case DType::Int16:
      case DType::Int32:
      case DType::Int64:
      case DType::UInt8:
      case DType::UInt16:
      case DType::UInt32:
      case DType::UInt64:
      case DType::Bool:
        VKG_THROW("fill_floats: not a floating type");
    }
  }
}

void fill_integers(Tensor& t, NumpyRandomState& rng, const std::string& name, std::pair<double, double> range) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Python's int() truncates toward zero.
      const double lo = std::trunc(range.first);
      const double hi = std::trunc(range.second);
      // Bounds of T as exact doubles: [-2^(bits-1), 2^(bits-1)) or [0, 2^bits).
      const double limit = std::ldexp(1.0, int(8 * sizeof(T)) - (std::is_signed_v<T> ? 1 : 0));
      const double lowest = std::is_signed_v<T> ? -limit : 0.0;
      VKG_CHECK(std::isfinite(lo) && std::isfinite(hi), "input '" << name << "': value range [" << range.first << ", "
                                                                  << range.second
                                                                  << "] must be finite for integer data");
      VKG_CHECK(lo <= hi, "input '" << name << "': value range [" << range.first << ", " << range.second
                                    << "] has its minimum above its maximum");
      VKG_CHECK(lo >= lowest && hi < limit, "input '" << name << "': value range [" << lo << ", " << hi
                                                      << "] is out of bounds for " << dtype_name(t.dtype()));
      const uint64_t off = std::is_signed_v<T> ? uint64_t(int64_t(lo)) : uint64_t(lo);
      const uint64_t span = std::is_signed_v<T> ? uint64_t(int64_t(hi)) - off : uint64_t(hi) - off;
      const auto values = rng.randint(int(8 * sizeof(T)), off, span, t.size());
      for (int64_t i = 0; i < t.size(); ++i) t.data<T>()[i] = static_cast<T>(values[size_t(i)]);
    } else {
      VKG_THROW("fill_integers: not an integer type");
    }
  });
}

void fill_bools(Tensor& t, NumpyRandomState& rng, const std::string& name, std::pair<double, double> range) {
  const bool lo = range.first != 0;  // Python's bool(float)
  const bool hi = range.second != 0;
  VKG_CHECK(!lo || hi, "input '" << name << "': value range [" << range.first << ", " << range.second
                                 << "] gives bool bounds [True, False]");
  const auto values = rng.randint_bool(lo, hi != lo, t.size());
  for (int64_t i = 0; i < t.size(); ++i) t.data<bool>()[i] = values[size_t(i)];
}

TensorMap generate(const std::vector<InputSpec>& specs, const DataLoaderOptions& options, int iteration) {
  const uint64_t seed = options.seed + uint64_t(iteration);
  VKG_CHECK(seed <= 0xffffffffull,
            "seed " << seed << " (seed + iteration) is out of range: numpy seeds are 0 to 2^32 - 1");
  VKG_VERBOSE("Generating data using numpy seed: " << seed);
  NumpyRandomState rng{uint32_t(seed)};
  TensorMap feed;
  for (const auto& spec : specs) {
    Tensor t(spec.dtype, spec.shape);
    const auto range = value_range(spec.name, options);
    if (spec.values) {
      for (int64_t i = 0; i < t.size(); ++i) t.set_from_double(i, double((*spec.values)[size_t(i)]));
    } else if (is_floating(spec.dtype)) {
      fill_floats(t, rng, range);
    } else if (spec.dtype == DType::Bool) {
      fill_bools(t, rng, spec.name, range);
    } else {
      fill_integers(t, rng, spec.name, range);
    }
    feed.emplace(spec.name, std::move(t));
  }
  return feed;
}

// Checks one loaded feed dict against the model and keeps only the model's inputs.
TensorMap check_loaded(TensorMap feed, const std::vector<ValueInfo>& graph_inputs, const DataLoaderOptions& options,
                       const std::string& where) {
  std::string names_in_file;
  for (const auto& [name, tensor] : feed) names_in_file += (names_in_file.empty() ? "" : ", ") + name;
  TensorMap checked;
  for (const auto& input : graph_inputs) {
    auto it = feed.find(input.name);
    VKG_CHECK(it != feed.end(), where << ": model input '" << input.name << "' is missing (the file has: "
                                      << (names_in_file.empty() ? "nothing" : names_in_file) << ")");
    const Tensor& t = it->second;
    VKG_CHECK(!input.dtype || *input.dtype == t.dtype(), where << ": input '" << input.name << "' is " << t.describe()
                                                               << " but the model expects " << input.describe());
    VKG_CHECK(!input.shape || fits(t.shape(), *input.shape), where << ": input '" << input.name << "' has shape "
                                                                   << shape_to_string(t.shape())
                                                                   << " but the model expects " << input.describe());
    if (auto user = options.input_shapes.find(input.name); user != options.input_shapes.end()) {
      VKG_CHECK(user->second == t.shape(), where << ": input '" << input.name << "' has shape "
                                                 << shape_to_string(t.shape()) << " but --input-shapes gives "
                                                 << shape_to_string(user->second));
    }
    checked.emplace(input.name, std::move(it->second));
    feed.erase(it);
  }
  for (const auto& [name, tensor] : feed) {
    VKG_WARNING(where << ": input '" << name << "' is not an input of the model; ignoring it");
  }
  return checked;
}

std::vector<TensorMap> load(const std::vector<ValueInfo>& graph_inputs, const DataLoaderOptions& options) {
  if (options.seed != 1 || !options.val_range.empty() || options.iterations != 1) {
    VKG_WARNING("Inputs are loaded from files, so --seed, --val-range and --iterations are ignored");
  }
  std::vector<TensorMap> all;
  for (const auto& path : options.load_inputs_paths) {
    auto feeds = load_inputs(path);
    VKG_CHECK(!feeds.empty(), "'" << path << "': the inputs file holds no iterations");
    for (size_t i = 0; i < feeds.size(); ++i) {
      const std::string where = "'" + path + "': iteration " + std::to_string(i);
      all.push_back(check_loaded(std::move(feeds[i]), graph_inputs, options, where));
    }
    VKG_INFO("Loaded " << feeds.size() << " iteration(s) of input data from " << path);
  }
  return all;
}

}  // namespace

TensorMap generate_inputs(const std::vector<ValueInfo>& graph_inputs, const DataLoaderOptions& options, int iteration) {
  return generate(resolve_inputs(graph_inputs, options), options, iteration);
}

std::map<std::string, Shape> loaded_input_shapes(const DataLoaderOptions& options) {
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::string> first_seen;  // tensor -> where its shape was taken from
  for (const auto& path : options.load_inputs_paths) {
    const std::vector<TensorMap> feeds = load_inputs(path);
    for (size_t i = 0; i < feeds.size(); ++i) {
      const std::string where = "'" + path + "' iteration " + std::to_string(i);
      for (const auto& [name, t] : feeds[i]) {
        auto [it, fresh] = shapes.emplace(name, t.shape());
        if (fresh) first_seen[name] = where;
        VKG_CHECK(it->second == t.shape(), "input '" << name << "' has shape " << shape_to_string(t.shape()) << " in "
                                                     << where << " but " << shape_to_string(it->second) << " in "
                                                     << first_seen[name]
                                                     << "; a Vulkan engine is built for one shape of each input");
      }
    }
  }
  return shapes;
}

std::vector<TensorMap> load_or_generate_inputs(const std::vector<ValueInfo>& graph_inputs,
                                               const DataLoaderOptions& options) {
  if (!options.load_inputs_paths.empty()) return load(graph_inputs, options);
  VKG_CHECK(options.iterations >= 1, "the number of iterations must be at least 1, not " << options.iterations);
  const auto specs = resolve_inputs(graph_inputs, options);
  std::vector<TensorMap> feeds;
  for (int i = 0; i < options.iterations; ++i) feeds.push_back(generate(specs, options, i));
  return feeds;
}

}  // namespace vkg
