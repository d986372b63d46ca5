// Host conversions between fp32 and fp16, as an engine with fp16 inputs or outputs runs them on
// every inference (Tensor::cast: F16C eight values an instruction where the CPU has it), beside
// the one-value-at-a-time conversion in the same process.
//
//   build/bench/vkgraphy_host_bench [--elements N] [--repeats R]
//
// N defaults to 307,200, PP-OCRv4 det's 1 x 3 x 320 x 320 input; values uniform in [-3, 3).
// Prints the best of R timings of each. Results are recorded in docs/bench.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/core/tensor.h"

using namespace vkg;

namespace {

template <class F> double best_ms(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t elements = 307200;
  int repeats = 20;
  CLI::App app{"fp32 <-> fp16 host conversions: Tensor::cast against one value at a time; docs/bench.md"};
  app.add_option("--elements", elements, "Values converted")->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  app.add_option("--repeats", repeats, "Timings of each (the best is printed)")->check(CLI::Range(1, 100000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::vector<float> values(static_cast<size_t>(elements));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (float& v : values) v = dist(rng);
  const Tensor f32 = Tensor::from_vector<float>({elements}, values);
  const Tensor f16 = f32.cast(DType::Float16);
  std::vector<uint16_t> halves(values.size());
  std::vector<float> floats(values.size());
  const uint16_t* half_bits = reinterpret_cast<const uint16_t*>(f16.data<Half>());

  const double cast_to_f16 = best_ms(repeats, [&] { (void)f32.cast(DType::Float16); });
  const double one_to_f16 = best_ms(repeats, [&] {
    for (size_t i = 0; i < values.size(); ++i) halves[i] = float_to_half(values[i]);
  });
  const double cast_to_f32 = best_ms(repeats, [&] { (void)f16.cast(DType::Float32); });
  const double one_to_f32 = best_ms(repeats, [&] {
    for (size_t i = 0; i < values.size(); ++i) floats[i] = half_to_float(half_bits[i]);
  });
  std::printf("%lld values, best of %d\n", static_cast<long long>(elements), repeats);
  std::printf("%-34s %10s %12s\n", "conversion", "ms", "ns/value");
  const double n = double(elements);
  std::printf("%-34s %10.3f %12.3f\n", "fp32 -> fp16 Tensor::cast", cast_to_f16, cast_to_f16 * 1e6 / n);
  std::printf("%-34s %10.3f %12.3f\n", "fp32 -> fp16 one at a time", one_to_f16, one_to_f16 * 1e6 / n);
  std::printf("%-34s %10.3f %12.3f\n", "fp16 -> fp32 Tensor::cast", cast_to_f32, cast_to_f32 * 1e6 / n);
  std::printf("%-34s %10.3f %12.3f\n", "fp16 -> fp32 one at a time", one_to_f32, one_to_f32 * 1e6 / n);
  // Keeps the one-at-a-time loops' results alive.
  return halves[0] == 0xffffu && floats[0] == 1e30f ? 1 : 0;
}
