// Tensor <-> onnx::TensorProto.
#include <onnx/onnx_pb.h>

#include <cstring>

#include "runtime/onnx/onnx_import.h"
#include "runtime/onnx/weight_strip.h"

namespace vkg {

namespace {

template <class Dst, class Field> void copy_field(const Field& field, Tensor& t) {
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.size(); ++i) out[i] = Dst(field.Get(int(i)));
}

// The dims of `p`, each non-negative and together a sane element count.
Shape checked_shape(const onnx::TensorProto& p, const std::string& what) {
  Shape shape;
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    VKG_CHECK(d >= 0, what << " has a negative dimension " << d);
    VKG_CHECK(d == 0 || n <= (int64_t(1) << 48) / d, what << " has an absurd shape");
    n *= d;
    shape.push_back(d);
  }
  return shape;
}

// How many values `p` holds in the repeated field ONNX stores `dtype` in.
int typed_value_count(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::Float32: return p.float_data_size();
    case DType::Float64: return p.double_data_size();
    case DType::Int64: return p.int64_data_size();
    case DType::UInt32:
    case DType::UInt64: return p.uint64_data_size();
    case DType::Int32:
    case DType::Int16:
    case DType::Int8:
    case DType::UInt16:
    case DType::UInt8:
    case DType::Bool:
    case DType::Float16:
    case DType::BFloat16: return p.int32_data_size();
  }
  return 0;
}

// Fills `t` from the repeated field ONNX stores its dtype in.
void copy_typed_values(const onnx::TensorProto& p, Tensor& t) {
  switch (t.dtype()) {
    case DType::Float32:
      copy_field<float>(p.float_data(), t);
      break;
    case DType::Float64:
      copy_field<double>(p.double_data(), t);
      break;
    case DType::Int64:
      copy_field<int64_t>(p.int64_data(), t);
      break;
    case DType::UInt32:
      copy_field<uint32_t>(p.uint64_data(), t);
      break;
    case DType::UInt64:
      copy_field<uint64_t>(p.uint64_data(), t);
      break;
    case DType::Int32:
      copy_field<int32_t>(p.int32_data(), t);
      break;
    case DType::Int16:
      copy_field<int16_t>(p.int32_data(), t);
      break;
    case DType::Int8:
      copy_field<int8_t>(p.int32_data(), t);
      break;
    case DType::UInt16:
      copy_field<uint16_t>(p.int32_data(), t);
      break;
    case DType::UInt8:
      copy_field<uint8_t>(p.int32_data(), t);
      break;
    case DType::Bool:
      copy_field<bool>(p.int32_data(), t);
      break;
    case DType::Float16:
    case DType::BFloat16: {
      // Stored as the raw 16 bits in int32_data.
      uint16_t* out = reinterpret_cast<uint16_t*>(t.raw());
      for (int64_t i = 0; i < t.size(); ++i) out[i] = uint16_t(p.int32_data(int(i)));
      break;
    }
  }
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& p) {
  const std::string what = "tensor '" + p.name() + "'";
  VKG_CHECK(p.data_location() != onnx::TensorProto::EXTERNAL,
            what << " refers to external data that was not loaded");
  const auto dtype = dtype_from_onnx(p.data_type());
  VKG_CHECK(dtype, what << " has unsupported data type "
                        << onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(p.data_type())) << " ("
                        << p.data_type() << ")");
  const Shape shape = checked_shape(p, what);
  const int64_t n = num_elements(shape);
  // A weight `surgeon weight-strip` (vkgraphy's or Polygraphy's) left without data.
  VKG_CHECK(n == 0 || p.has_raw_data() || p.doc_string().rfind(kWeightlessMark, 0) != 0,
            what << " was stripped of its data (weight-strip); `vkgraphy surgeon weight-reconstruct` fills it with "
                    "proxy values");
  // The data must be there before anything is allocated: a corrupt shape never
  // turns into a huge allocation.
  const size_t nbytes = size_t(n) * dtype_size(*dtype);
  if (p.has_raw_data()) {
    VKG_CHECK(p.raw_data().size() == nbytes, what << " has " << p.raw_data().size() << " bytes of raw data, "
                                                   << dtype_name(*dtype) << shape_to_string(shape) << " needs "
                                                   << nbytes);
    Tensor t(*dtype, shape);
    if (nbytes > 0) std::memcpy(t.raw(), p.raw_data().data(), nbytes);
    return t;
  }
  const int count = typed_value_count(p, *dtype);
  VKG_CHECK(count == n, what << " has " << count << " values, " << dtype_name(*dtype) << shape_to_string(shape)
                             << " needs " << n);
  Tensor t(*dtype, shape);
  copy_typed_values(p, t);
  return t;
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->Clear();
  p->set_name(name);
  p->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  p->set_raw_data(std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes()));
}

}  // namespace vkg
