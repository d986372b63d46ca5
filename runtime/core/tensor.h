// Tensor: a dense, row-major, owning n-dimensional array of one DType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"

namespace vkg {

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar, shape {}).
int64_t num_elements(const Shape& shape);
// Number of elements of the dims [begin, end) of a shape.
int64_t num_elements(const Shape& shape, size_t begin, size_t end);
// "[1, 3, 224, 224]"
std::string shape_to_string(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);
// numpy broadcasting of two shapes; throws Error when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Strides of `shape` broadcast to `out` (0 on broadcast axes), left-padded to out.size().
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out);
// Normalises a possibly negative axis into [0, rank); throws Error when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor.
  Tensor(DType dtype, Shape shape);

  template <class T> static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    Tensor t(dtype_of<T>, std::move(shape));
    VKG_CHECK(int64_t(values.size()) == t.size(),
              "Tensor::from_vector: " << values.size() << " values for shape " << shape_to_string(t.shape()));
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
    return t;
  }
  template <class T> static Tensor scalar(T value) { return from_vector<T>({}, {value}); }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return int64_t(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_.at(size_t(i)); }
  int64_t size() const { return size_; }  // number of elements
  size_t nbytes() const { return bytes_.size(); }
  bool empty() const { return size_ == 0; }

  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }

  // Typed access; throws Error when T does not match dtype().
  template <class T> T* data() {
    check_type(dtype_of<T>);
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <class T> const T* data() const {
    check_type(dtype_of<T>);
    return reinterpret_cast<const T*>(bytes_.data());
  }

  // Same data, new shape with the same element count (throws otherwise).
  Tensor reshaped(Shape shape) const;
  // Element-wise conversion to another dtype (numpy astype semantics; float->int truncates).
  Tensor cast(DType to) const;
  // Values converted to double / int64 (any dtype), in row-major order.
  std::vector<double> to_doubles() const;
  std::vector<int64_t> to_int64s() const;
  // Element i converted to double.
  double get_as_double(int64_t i) const;
  // Sets element i from a double (rounding/truncating like a cast).
  void set_from_double(int64_t i, double v);

  bool bit_equal(const Tensor& other) const;
  // "float32[1, 3, 224, 224]"
  std::string describe() const;

 private:
  void check_type(DType requested) const;

  DType dtype_ = DType::Float32;
  Shape shape_;
  int64_t size_ = 0;
  std::vector<std::byte> bytes_;
};

// Named tensors (graph inputs or outputs), ordered by name.
using TensorMap = std::map<std::string, Tensor>;

// Dense row-major data of one DType that another owner holds (a Tensor, a numpy array):
// what a consumer that only reads its inputs takes, so the caller need not copy them.
struct TensorView {
  DType dtype = DType::Float32;
  Shape shape;
  const std::byte* data = nullptr;  // num_elements(shape) * dtype_size(dtype) bytes

  static TensorView of(const Tensor& t) { return {t.dtype(), t.shape(), t.raw()}; }
  size_t nbytes() const { return size_t(num_elements(shape)) * dtype_size(dtype); }
  Tensor copy() const;  // an owning copy
};
using TensorViewMap = std::map<std::string, TensorView>;

}  // namespace vkg
