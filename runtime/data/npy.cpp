#include "runtime/data/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

#include "runtime/data/array_stats.h"

namespace vkg {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kArrayAlign = 64;           // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

// Parser for the Python dict literal in a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        skip_space();
        VKG_CHECK(peek() == '\'' || peek() == '"',
                  "unsupported .npy descr (structured dtypes are not supported): " << std::string(text_));
        h.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else {
        expect('}');
        break;
      }
    }
    skip_space();
    VKG_CHECK(pos_ == text_.size(), "malformed .npy header: trailing text after the dictionary");
    VKG_CHECK(have_descr && have_order && have_shape,
              "malformed .npy header: it must have 'descr', 'fortran_order' and 'shape': " << std::string(text_));
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    VKG_THROW("malformed .npy header (" << what << " at offset " << pos_ << "): " << std::string(text_));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  int64_t parse_int() {
    skip_space();
    const size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    if (pos_ == start) fail("expected a non-negative integer");
    const std::string digits(text_.substr(start, pos_ - start));
    if (digits.size() > 18) fail("dimension too large");
    if (peek() == 'L') ++pos_;  // Python 2 long suffix
    return std::stoll(digits);
  }
  Shape parse_shape() {
    Shape shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      shape.push_back(parse_int());
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The DType of a descr's type part ("f4", "i8", "b1", ...).
std::optional<DType> dtype_of_descr(std::string_view type) {
  if (type == "f2") return DType::Float16;
  if (type == "f4") return DType::Float32;
  if (type == "f8") return DType::Float64;
  if (type == "i1") return DType::Int8;
  if (type == "i2") return DType::Int16;
  if (type == "i4") return DType::Int32;
  if (type == "i8") return DType::Int64;
  if (type == "u1") return DType::UInt8;
  if (type == "u2") return DType::UInt16;
  if (type == "u4") return DType::UInt32;
  if (type == "u8") return DType::UInt64;
  if (type == "b1") return DType::Bool;
  return std::nullopt;
}

uint64_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t(uint8_t(bytes[offset + i])) << (8 * i);
  return v;
}

// Rewrites column-major (Fortran order) element data in row-major order.
std::vector<std::byte> fortran_to_c_order(const std::byte* src, const Shape& shape, size_t elem) {
  const int64_t n = num_elements(shape);
  std::vector<std::byte> dst(size_t(n) * elem);
  // Column-major strides: the first axis varies fastest.
  std::vector<int64_t> fstrides(shape.size(), 1);
  for (size_t i = 1; i < shape.size(); ++i) fstrides[i] = fstrides[i - 1] * shape[i - 1];
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i) offset += index[i] * fstrides[i];
    std::memcpy(dst.data() + size_t(flat) * elem, src + size_t(offset) * elem, elem);
    for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {  // row-major increment
      if (++index[size_t(i)] < shape[size_t(i)]) break;
      index[size_t(i)] = 0;
    }
  }
  return dst;
}

}  // namespace

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "<f4";
    case DType::Float16:
      return "<f2";
    case DType::Float64:
      return "<f8";
    case DType::Int8:
      return "|i1";
    case DType::Int16:
      return "<i2";
    case DType::Int32:
      return "<i4";
    case DType::Int64:
      return "<i8";
    case DType::UInt8:
      return "|u1";
    case DType::UInt16:
      return "<u2";
    case DType::UInt32:
      return "<u4";
    case DType::UInt64:
      return "<u8";
    case DType::Bool:
      return "|b1";
    case DType::BFloat16:
      VKG_THROW("bfloat16 has no numpy dtype and cannot be stored in .npy; cast it to float32 first");
  }
  VKG_THROW("unknown dtype");
}

std::string save_npy(const Tensor& tensor) {
  // Same layout as numpy's _write_array_header: sorted keys, growth padding
  // after the dict, then spaces and a newline up to a 64-byte boundary.
  std::string dict = "{'descr': '" + npy_descr(tensor.dtype()) +
                     "', 'fortran_order': False, 'shape': " + python_tuple(tensor.shape()) + ", }";
  if (!tensor.shape().empty()) {
    const size_t digits = std::to_string(tensor.shape()[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const size_t unpadded = kMagicLen + 2 + 2 + dict.size() + 1;  // magic, version, length, dict, '\n'
  const size_t padding = kArrayAlign - unpadded % kArrayAlign;
  const size_t header_len = dict.size() + padding + 1;
  VKG_CHECK(header_len <= 0xffff,
            "tensor shape " << shape_to_string(tensor.shape()) << " is too long for a .npy header");

  std::string out(kMagic, kMagicLen);
  out += char(1);
  out += char(0);
  out += char(header_len & 0xff);
  out += char(header_len >> 8);
  out += dict;
  out.append(padding, ' ');
  out += '\n';
  const auto* data = reinterpret_cast<const char*>(tensor.raw());
  out.append(data, tensor.nbytes());
  return out;
}

Tensor load_npy(std::string_view bytes) {
  VKG_CHECK(bytes.size() >= kMagicLen + 2 && bytes.substr(0, kMagicLen) == std::string_view(kMagic, kMagicLen),
            "not a .npy array (the magic string \\x93NUMPY is missing)");
  const int major = uint8_t(bytes[6]);
  const int minor = uint8_t(bytes[7]);
  VKG_CHECK((major == 1 || major == 2 || major == 3) && minor == 0,
            "unsupported .npy format version " << major << "." << minor << " (1.0, 2.0 and 3.0 are supported)");
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + len_width;
  VKG_CHECK(bytes.size() >= prefix, ".npy data is truncated inside the header");
  const uint64_t header_len = read_le(bytes, kMagicLen + 2, len_width);
  VKG_CHECK(header_len <= bytes.size() - prefix,
            ".npy header claims " << header_len << " bytes but only " << bytes.size() - prefix << " follow");

  const auto header = HeaderParser(bytes.substr(prefix, header_len)).parse();
  VKG_CHECK(header.descr.size() >= 3, "unsupported .npy descr '" << header.descr << "'");
  const char order = header.descr[0];
  const auto dtype = dtype_of_descr(std::string_view(header.descr).substr(1));
  VKG_CHECK(dtype && (order == '<' || order == '>' || order == '|' || order == '='),
            "unsupported .npy dtype '" << header.descr << "' (supported: float16/32/64, (u)int8/16/32/64 and bool)");

  int64_t count = 1;
  for (int64_t d : header.shape) {
    VKG_CHECK(d == 0 || count <= std::numeric_limits<int64_t>::max() / 8 / d,
              ".npy shape " << shape_to_string(header.shape) << " is too large");
    count *= d;
  }
  const size_t elem = dtype_size(*dtype);
  const size_t nbytes = size_t(count) * elem;
  const size_t available = bytes.size() - prefix - header_len;
  VKG_CHECK(available >= nbytes, ".npy data is truncated: " << header.descr << " array of shape "
                                                            << shape_to_string(header.shape) << " needs " << nbytes
                                                            << " bytes, found " << available);
  VKG_CHECK(available == nbytes, ".npy data has " << available - nbytes << " unexpected trailing bytes");

  Tensor t(*dtype, header.shape);
  const auto* src = reinterpret_cast<const std::byte*>(bytes.data() + prefix + header_len);
  if (header.fortran_order && header.shape.size() > 1) {
    const auto c_order = fortran_to_c_order(src, header.shape, elem);
    std::memcpy(t.raw(), c_order.data(), nbytes);
  } else if (nbytes > 0) {
    std::memcpy(t.raw(), src, nbytes);
  }
  if (order == '>' && elem > 1) {
    for (size_t i = 0; i < nbytes; i += elem) std::reverse(t.raw() + i, t.raw() + i + elem);
  }
  if (*dtype == DType::Bool) {  // numpy treats any non-zero byte as True
    for (size_t i = 0; i < nbytes; ++i) t.raw()[i] = t.raw()[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  return t;
}

}  // namespace vkg
