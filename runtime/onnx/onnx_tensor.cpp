// Tensor <-> onnx::TensorProto.
#include <onnx/onnx_pb.h>

#include <cstring>

#include "runtime/onnx/onnx_import.h"

namespace vkg {

namespace {

template <class Dst, class Field> void copy_field(const Field& field, Tensor& t) {
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.size(); ++i) out[i] = Dst(field.Get(int(i)));
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
  Shape shape;
  for (int64_t d : p.dims()) {
    VKG_CHECK(d >= 0, what << " has a negative dimension " << d);
    shape.push_back(d);
  }
  VKG_CHECK(shape.size() <= 16 && num_elements(shape) <= (int64_t(1) << 40), what << " has an absurd shape");
  Tensor t(*dtype, shape);
  const int64_t n = t.size();
  if (p.has_raw_data()) {
    VKG_CHECK(p.raw_data().size() == t.nbytes(), what << " has " << p.raw_data().size() << " bytes of raw data, "
                                                      << t.describe() << " needs " << t.nbytes());
    if (t.nbytes() > 0) std::memcpy(t.raw(), p.raw_data().data(), t.nbytes());
    return t;
  }
  auto check_count = [&](int count) {
    VKG_CHECK(count == n, what << " has " << count << " values, " << t.describe() << " needs " << n);
  };
  switch (*dtype) {
    case DType::Float32:
      check_count(p.float_data_size());
      copy_field<float>(p.float_data(), t);
      break;
    case DType::Float64:
      check_count(p.double_data_size());
      copy_field<double>(p.double_data(), t);
      break;
    case DType::Int64:
      check_count(p.int64_data_size());
      copy_field<int64_t>(p.int64_data(), t);
      break;
    case DType::UInt32:
      check_count(p.uint64_data_size());
      copy_field<uint32_t>(p.uint64_data(), t);
      break;
    case DType::UInt64:
      check_count(p.uint64_data_size());
      copy_field<uint64_t>(p.uint64_data(), t);
      break;
    case DType::Int32:
      check_count(p.int32_data_size());
      copy_field<int32_t>(p.int32_data(), t);
      break;
    case DType::Int16:
      check_count(p.int32_data_size());
      copy_field<int16_t>(p.int32_data(), t);
      break;
    case DType::Int8:
      check_count(p.int32_data_size());
      copy_field<int8_t>(p.int32_data(), t);
      break;
    case DType::UInt16:
      check_count(p.int32_data_size());
      copy_field<uint16_t>(p.int32_data(), t);
      break;
    case DType::UInt8:
      check_count(p.int32_data_size());
      copy_field<uint8_t>(p.int32_data(), t);
      break;
    case DType::Bool:
      check_count(p.int32_data_size());
      copy_field<bool>(p.int32_data(), t);
      break;
    case DType::Float16:
    case DType::BFloat16: {
      // Stored as the raw 16 bits in int32_data.
      check_count(p.int32_data_size());
      uint16_t* out = reinterpret_cast<uint16_t*>(t.raw());
      for (int64_t i = 0; i < n; ++i) out[i] = uint16_t(p.int32_data(int(i)));
      break;
    }
  }
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
