#include "runtime/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace vkg {

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t num_elements(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= shape[d];
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i) strides[size_t(i)] = strides[size_t(i) + 1] * shape[size_t(i) + 1];
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      VKG_THROW("shapes " << shape_to_string(a) << " and " << shape_to_string(b) << " cannot be broadcast together");
    }
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  VKG_CHECK(shape.size() <= out.size(), "cannot broadcast " << shape_to_string(shape) << " to " << shape_to_string(out));
  std::vector<int64_t> strides(out.size(), 0);
  const auto own = contiguous_strides(shape);
  const size_t offset = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    VKG_CHECK(shape[i] == out[i + offset] || shape[i] == 1,
              "cannot broadcast " << shape_to_string(shape) << " to " << shape_to_string(out));
    strides[i + offset] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  const int64_t lo = -std::max<int64_t>(rank, 1), hi = std::max<int64_t>(rank, 1) - 1;
  VKG_CHECK(axis >= lo && axis <= hi, "axis " << axis << " is out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) VKG_CHECK(d >= 0, "negative dimension in shape " << shape_to_string(shape_));
  size_ = num_elements(shape_);
  bytes_.assign(size_t(size_) * dtype_size(dtype_), std::byte{0});
}

void Tensor::check_type(DType requested) const {
  VKG_CHECK(requested == dtype_, "tensor of type " << dtype_name(dtype_) << " accessed as " << dtype_name(requested));
}

Tensor Tensor::reshaped(Shape shape) const {
  VKG_CHECK(num_elements(shape) == size_,
            "cannot reshape " << describe() << " to " << shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

namespace {

template <class T> double load_double(const std::byte* p, int64_t i) {
  T v;
  std::memcpy(&v, p + size_t(i) * sizeof(T), sizeof(T));
  if constexpr (is_half_type<T>) {
    return double(float(v));
  } else {
    return double(v);
  }
}

template <class T> void store_double(std::byte* p, int64_t i, double d) {
  T v;
  if constexpr (is_half_type<T>) {
    v = T(float(d));
  } else if constexpr (std::is_same_v<T, bool>) {
    v = d != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    // numpy-like: NaN/inf and out-of-range values are undefined there; saturate here.
    if (std::isnan(d)) {
      v = 0;
    } else if (d >= double(std::numeric_limits<T>::max())) {
      v = std::numeric_limits<T>::max();
    } else if (d <= double(std::numeric_limits<T>::lowest())) {
      v = std::numeric_limits<T>::lowest();
    } else {
      v = T(d);
    }
  } else {
    v = T(d);
  }
  std::memcpy(p + size_t(i) * sizeof(T), &v, sizeof(T));
}

}  // namespace

double Tensor::get_as_double(int64_t i) const {
  return visit_dtype(dtype_, [&]<typename T>() { return load_double<T>(bytes_.data(), i); });
}

void Tensor::set_from_double(int64_t i, double v) {
  visit_dtype(dtype_, [&]<typename T>() { store_double<T>(bytes_.data(), i, v); });
}

Tensor Tensor::cast(DType to) const {
  if (to == dtype_) return *this;
  Tensor out(to, shape_);
  const std::byte* src = bytes_.data();
  std::byte* dst = out.bytes_.data();
  // The types are resolved once per tensor, not per element: the engine's inputs and outputs pass
  // through here on every run (fp32 to fp16 storage and back).
  visit_dtype(dtype_, [&]<typename S>() {
    visit_dtype(to, [&]<typename D>() {
      // fp16 storage to float32 and back, the engines' conversions, without the trip through double.
      if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>) {
        static_assert(sizeof(Half) == sizeof(uint16_t));
        halves_to_floats(reinterpret_cast<const uint16_t*>(data<Half>()), out.data<float>(), size_t(size_));
        return;
      } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Half>) {
        floats_to_halves(data<float>(), reinterpret_cast<uint16_t*>(out.data<Half>()), size_t(size_));
        return;
      }
      for (int64_t i = 0; i < size_; ++i) {
        if constexpr (std::is_integral_v<S> && std::is_integral_v<D>) {
          // Exact for 64-bit integers, which a double cannot hold.
          S s;
          std::memcpy(&s, src + size_t(i) * sizeof(S), sizeof(S));
          const D d = std::is_same_v<D, bool> ? D(s != 0) : D(s);
          std::memcpy(dst + size_t(i) * sizeof(D), &d, sizeof(D));
        } else {
          store_double<D>(dst, i, load_double<S>(src, i));
        }
      }
    });
  });
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> v(static_cast<size_t>(size_));
  for (int64_t i = 0; i < size_; ++i) v[size_t(i)] = get_as_double(i);
  return v;
}

std::vector<int64_t> Tensor::to_int64s() const {
  if (dtype_ == DType::Int64) return std::vector<int64_t>(data<int64_t>(), data<int64_t>() + size_);
  const Tensor t = cast(DType::Int64);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + size_);
}

bool Tensor::bit_equal(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && bytes_ == other.bytes_;
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

Tensor TensorView::copy() const {
  Tensor t(dtype, shape);
  if (t.nbytes() > 0) std::memcpy(t.raw(), data, t.nbytes());
  return t;
}

}  // namespace vkg
