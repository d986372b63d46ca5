// Text summaries of ONNX models (from the protobuf, so that models the importer
// would refuse can still be shown) and of tensor values.
#include "runtime/onnx/model_summary.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/data/array_stats.h"

namespace vkg {

namespace {

// What is known about one tensor: dtype text ("" if unknown) and dims (nullopt if the rank is unknown).
struct Meta {
  std::string dtype;
  std::optional<std::vector<std::string>> shape;
};
using MetaMap = std::map<std::string, Meta>;

// Prefixes every non-empty line with `spaces` blanks; with `skip_first`, all but the first line.
std::string indent_block(const std::string& text, size_t spaces, bool skip_first = false) {
  const std::string pad(spaces, ' ');
  std::string out;
  bool line_start = !skip_first;
  for (char c : text) {
    if (line_start && c != '\n') out += pad;
    line_start = c == '\n';
    out += c;
  }
  return out;
}

std::string onnx_dtype_name(int32_t onnx_type) {
  if (onnx_type == onnx::TensorProto::UNDEFINED) return "";
  if (auto dt = dtype_from_onnx(onnx_type)) return dtype_name(*dt);
  if (!onnx::TensorProto_DataType_IsValid(onnx_type)) return "type" + std::to_string(onnx_type);
  std::string name = onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(onnx_type));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Python tuple text: "(1, 3)", "(5,)", "()".
std::string tuple_text(const std::vector<std::string>& items) {
  std::string out = "(";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + (items.size() == 1 ? ",)" : ")");
}

Meta meta_from_type(const onnx::TypeProto& type) {
  Meta meta;
  if (type.has_tensor_type()) {
    const auto& tt = type.tensor_type();
    meta.dtype = onnx_dtype_name(tt.elem_type());
    if (tt.has_shape()) {
      std::vector<std::string> dims;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value())
          dims.push_back(std::to_string(d.dim_value()));
        else if (d.has_dim_param())
          dims.push_back(d.dim_param());
        else
          dims.push_back("?");
      }
      meta.shape = dims;
    }
  } else if (type.has_sequence_type()) {
    const Meta elem = meta_from_type(type.sequence_type().elem_type());
    meta.dtype = "sequence(" + (elem.dtype.empty() ? "?" : elem.dtype) + ")";
  } else if (type.has_optional_type()) {
    const Meta elem = meta_from_type(type.optional_type().elem_type());
    meta.dtype = "optional(" + (elem.dtype.empty() ? "?" : elem.dtype) + ")";
    meta.shape = elem.shape;
  } else if (type.has_map_type()) {
    meta.dtype = "map";
  } else if (type.has_sparse_tensor_type()) {
    meta.dtype = "sparse(" + onnx_dtype_name(type.sparse_tensor_type().elem_type()) + ")";
  }
  return meta;
}

Meta meta_from_tensor(const onnx::TensorProto& t) {
  Meta meta;
  meta.dtype = onnx_dtype_name(t.data_type());
  std::vector<std::string> dims;
  for (int64_t d : t.dims()) dims.push_back(std::to_string(d));
  meta.shape = dims;
  return meta;
}

std::string meta_text(const std::string& name, const Meta* meta) {
  if (!meta || (meta->dtype.empty() && !meta->shape)) return name;
  std::string out = name + " [";
  if (!meta->dtype.empty()) out += "dtype=" + meta->dtype;
  if (meta->shape) out += std::string(meta->dtype.empty() ? "" : ", ") + "shape=" + tuple_text(*meta->shape);
  return out + "]";
}

// "{a [dtype=float32, shape=(1,)],\n b [...]}"
std::string meta_list(const std::vector<std::string>& lines) {
  std::string out = "{";
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? ",\n " : "") + lines[i];
  return out + "}";
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[48];
  if (unit == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", value, units[unit]);
  return buf;
}

// Bytes an initializer takes when its data is present (from dims and dtype, not from the payload).
uint64_t initializer_bytes(const onnx::TensorProto& t) {
  const auto dt = dtype_from_onnx(t.data_type());
  if (!dt) return t.raw_data().size();
  uint64_t n = 1;
  for (int64_t d : t.dims()) n *= uint64_t(std::max<int64_t>(d, 0));
  return n * dtype_size(*dt);
}

std::string stats_text(const Tensor& t) {
  if (t.size() == 0) return "Stats: empty";
  return "Stats: " + format_stats(compute_stats(t.to_doubles(), t.shape()));
}

// "Stats: ...\n<values>" of a tensor proto, or why its values cannot be shown.
std::string proto_values_text(const onnx::TensorProto& proto) {
  Tensor t;
  try {
    t = tensor_from_proto(proto);
  } catch (const Error& e) {
    return "Values unavailable: " + std::string(e.what());
  }
  return stats_text(t) + "\n" + indent_block(format_values(t), 4);
}

// Float text the way Python prints a float: the shortest text that reads back as the
// same value, always with a '.' or an exponent ("1.0", "0.1", "1e-05").
std::string python_float(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, double(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string quoted_list(const google::protobuf::RepeatedPtrField<std::string>& items) {
  std::string out = "[";
  for (int i = 0; i < items.size(); ++i) out += (i ? ", '" : "'") + items.Get(i) + "'";
  return out + "]";
}

size_t count_nodes(const onnx::GraphProto& g) {
  size_t n = size_t(g.node_size());
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_nodes(a.g());
      for (const auto& sub : a.graphs()) n += count_nodes(sub);
    }
  return n;
}

class GraphPrinter {
 public:
  explicit GraphPrinter(const SummaryOptions& options) : options_(options) {}

  std::string print(const onnx::GraphProto& g, const MetaMap& outer, bool top_level) const;

 private:
  std::string attribute_text(const onnx::AttributeProto& a, const MetaMap& tensors) const;
  std::string node_text(int index, const onnx::NodeProto& node, const MetaMap& tensors,
                        const std::map<std::string, bool>& is_initializer) const;

  const SummaryOptions& options_;
};

std::string GraphPrinter::attribute_text(const onnx::AttributeProto& a, const MetaMap& tensors) const {
  std::string out;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return python_float(a.f());
    case onnx::AttributeProto::INT:
      return std::to_string(a.i());
    case onnx::AttributeProto::STRING:
      return a.s();
    case onnx::AttributeProto::FLOATS:
      out = "[";
      for (int i = 0; i < a.floats_size(); ++i) out += (i ? ", " : "") + python_float(a.floats(i));
      return out + "]";
    case onnx::AttributeProto::INTS:
      out = "[";
      for (int i = 0; i < a.ints_size(); ++i) out += (i ? ", " : "") + std::to_string(a.ints(i));
      return out + "]";
    case onnx::AttributeProto::STRINGS:
      return quoted_list(a.strings());
    case onnx::AttributeProto::TENSOR: {
      const Meta meta = meta_from_tensor(a.t());
      out = "Tensor: [dtype=" + meta.dtype + ", shape=" + tuple_text(*meta.shape) + "]";
      if (options_.weights) out += " | " + proto_values_text(a.t());
      return out;
    }
    case onnx::AttributeProto::GRAPH:
      return "\n" + indent_block(print(a.g(), tensors, false), 4);
    case onnx::AttributeProto::GRAPHS:
      for (int i = 0; i < a.graphs_size(); ++i)
        out +=
            "\n" + indent_block("---- Graph " + std::to_string(i) + " ----\n" + print(a.graphs(i), tensors, false), 4);
      return out;
    case onnx::AttributeProto::TENSORS:
      return std::to_string(a.tensors_size()) + " tensor(s)";
    case onnx::AttributeProto::SPARSE_TENSOR:
      return "sparse tensor";
    case onnx::AttributeProto::SPARSE_TENSORS:
      return std::to_string(a.sparse_tensors_size()) + " sparse tensor(s)";
    case onnx::AttributeProto::TYPE_PROTO:
      return "type";
    case onnx::AttributeProto::TYPE_PROTOS:
      return std::to_string(a.type_protos_size()) + " type(s)";
    case onnx::AttributeProto::UNDEFINED:
      return "(undefined attribute type)";
    default:  // protobuf enums may carry values from newer ONNX versions
      return "(unknown attribute type " + std::to_string(int(a.type())) + ")";
  }
}

std::string GraphPrinter::node_text(int index, const onnx::NodeProto& node, const MetaMap& tensors,
                                    const std::map<std::string, bool>& is_initializer) const {
  auto tensor_lines = [&](const google::protobuf::RepeatedPtrField<std::string>& names) {
    std::vector<std::string> lines;
    for (const auto& name : names) {
      auto it = tensors.find(name);
      const std::string label = is_initializer.count(name) ? "Initializer | " + name : name;
      lines.push_back(meta_text(label, it == tensors.end() ? nullptr : &it->second));
    }
    return meta_list(lines);
  };
  char index_text[16];
  std::snprintf(index_text, sizeof index_text, "%-4d", index);
  std::string op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") op += ", domain: " + node.domain();
  std::string out = "Node " + std::string(index_text) + " | " + node.name() + " [Op: " + op + "]\n";
  out += indent_block(tensor_lines(node.input()), 4) + "\n";
  out += "     -> " + indent_block(tensor_lines(node.output()), 8, /*skip_first=*/true) + "\n";
  if (options_.attrs && node.attribute_size() > 0) {
    out += "    ---- Attributes ----\n";
    const std::string prefix = node.name().empty() ? "" : node.name() + ".";
    for (const auto& a : node.attribute())
      out += indent_block(prefix + a.name() + " = " + attribute_text(a, tensors), 4) + "\n";
  }
  return out;
}

std::string GraphPrinter::print(const onnx::GraphProto& g, const MetaMap& outer, bool top_level) const {
  const std::string kind = top_level ? "Graph" : "Subgraph";
  MetaMap tensors = outer;
  std::map<std::string, bool> is_initializer;
  for (const auto& vi : g.value_info()) tensors[vi.name()] = meta_from_type(vi.type());
  for (const auto& t : g.initializer()) {
    tensors[t.name()] = meta_from_tensor(t);
    is_initializer[t.name()] = true;
  }
  std::vector<std::string> inputs, outputs, initializers;
  for (const auto& vi : g.input()) {
    if (is_initializer.count(vi.name())) continue;  // IR < 4 lists initializers as inputs too
    tensors[vi.name()] = meta_from_type(vi.type());
    inputs.push_back(meta_text(vi.name(), &tensors[vi.name()]));
  }
  for (const auto& vi : g.output()) {
    Meta meta = meta_from_type(vi.type());
    // Inference may know more than the declared output.
    if (auto it = tensors.find(vi.name()); it != tensors.end() && !meta.shape) meta = it->second;
    tensors[vi.name()] = meta;
    outputs.push_back(meta_text(vi.name(), &meta));
  }
  uint64_t init_bytes = 0;
  for (const auto& t : g.initializer()) {
    init_bytes += initializer_bytes(t);
    initializers.push_back(meta_text(t.name(), &tensors[t.name()]));
  }

  std::string out;
  if (options_.attrs && !g.doc_string().empty()) out += "---- Docstring ----\n" + g.doc_string() + "\n\n";
  out += "---- " + std::to_string(inputs.size()) + " " + kind + " Input(s) ----\n" + meta_list(inputs) + "\n\n";
  out += "---- " + std::to_string(outputs.size()) + " " + kind + " Output(s) ----\n" + meta_list(outputs) + "\n\n";
  out += "---- " + std::to_string(initializers.size()) + " Initializer(s), " + format_bytes(init_bytes) + " ----\n";
  if (g.sparse_initializer_size() > 0)
    out += "(and " + std::to_string(g.sparse_initializer_size()) + " sparse initializer(s), not shown)\n";
  if (options_.weights) {
    for (const auto& t : g.initializer())
      out += "Initializer | " + meta_text(t.name(), &tensors[t.name()]) + " | " + proto_values_text(t) + "\n\n";
    if (g.initializer_size() == 0) out += "{}\n\n";
  } else if (options_.layers) {
    out += meta_list(initializers) + "\n\n";
  } else {
    out += "\n";
  }

  const size_t total_nodes = count_nodes(g);
  out += "---- " + std::to_string(g.node_size()) + " Node(s)";
  if (top_level && total_nodes > size_t(g.node_size()))
    out += " (and " + std::to_string(total_nodes - size_t(g.node_size())) + " in subgraphs)";
  out += " ----\n";
  std::map<std::string, int> histogram;
  for (const auto& node : g.node()) ++histogram[node.op_type()];
  std::vector<std::pair<std::string, int>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!ops.empty()) {
    out += "Op counts:";
    for (size_t i = 0; i < ops.size(); ++i)
      out += (i ? ", " : " ") + ops[i].first + " x" + std::to_string(ops[i].second);
    out += "\n";
  }
  if (options_.layers)
    for (int i = 0; i < g.node_size(); ++i) out += node_text(i, g.node(i), tensors, is_initializer) + "\n";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A floating-point element as numpy shows it: "1.", "0.25", "1e-05", "nan".
std::string float_text(double value) {
  std::string text = format_g5(value);
  if (text.find_first_of(".ena") == std::string::npos) text += ".";
  return text;
}

std::string element_text(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&]<typename T>() -> std::string {
    const T value = t.data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return value ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
      return std::to_string(value);
    } else {
      return float_text(double(value));
    }
  });
}

// Prints the values of a tensor of rank >= 1 numpy-style, converting only the
// elements that are shown.
class ValuePrinter {
 public:
  ValuePrinter(const Tensor& t, bool summarise, int64_t edge) : t_(t), summarise_(summarise), edge_(edge) {}

  std::string print() {
    walk(0, 0, nullptr);  // first pass: texts of the shown elements, for the column width
    std::string out;
    walk(0, 0, &out);
    return out;
  }

 private:
  // Visits the sub-array at `axis` starting at flat index `offset`; appends it to `out` if given.
  void walk(size_t axis, int64_t offset, std::string* out) {
    const Shape& shape = t_.shape();
    const int64_t dim = shape[axis];
    int64_t stride = 1;
    for (size_t a = axis + 1; a < shape.size(); ++a) stride *= shape[a];
    const bool last_axis = axis + 1 == shape.size();
    const std::string separator =
        last_axis ? " " : std::string(shape.size() - axis - 1, '\n') + std::string(axis + 1, ' ');
    if (out) *out += "[";
    for (int64_t i = 0; i < dim; ++i) {
      if (out && i > 0) *out += separator;
      if (summarise_ && dim > 2 * edge_ && i == edge_) {
        if (out) *out += "...";
        i = dim - edge_ - 1;
        continue;
      }
      const int64_t index = offset + i * stride;
      if (!last_axis) {
        walk(axis + 1, index, out);
      } else if (!out) {
        const std::string& text = texts_[index] = element_text(t_, index);
        width_ = std::max(width_, text.size());
      } else {
        const std::string& text = texts_[index];
        *out += std::string(width_ - text.size(), ' ') + text;
      }
    }
    if (out) *out += "]";
  }

  const Tensor& t_;
  const bool summarise_;
  const int64_t edge_;
  std::map<int64_t, std::string> texts_;
  size_t width_ = 0;
};

}  // namespace

std::string summarize_onnx_model(const OnnxModel& model, const SummaryOptions& options) {
  const onnx::ModelProto& m = *model.proto;
  std::string default_opset = "unknown";
  std::string others;
  for (const auto& op : m.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx")
      default_opset = std::to_string(op.version());
    else
      others += (others.empty() ? "" : ", ") + op.domain() + ": " + std::to_string(op.version());
  }
  std::string out = "==== ONNX Model ====\n";
  out += "Name: " + m.graph().name() + " | ONNX Opset: " + default_opset;
  if (!others.empty()) out += " | Other Opsets: {" + others + "}";
  out += "\nIR Version: " + std::to_string(m.ir_version());
  if (!m.producer_name().empty())
    out += " | Producer: " + m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  if (m.model_version() != 0) out += " | Model Version: " + std::to_string(m.model_version());
  out += "\n\n";
  const GraphPrinter printer(options);
  out += printer.print(m.graph(), {}, true);
  return out;
}

std::string format_values(const Tensor& tensor, int64_t threshold, int64_t edge_items) {
  if (tensor.rank() == 0) return element_text(tensor, 0);
  if (tensor.size() == 0) return std::string(size_t(tensor.rank()), '[') + std::string(size_t(tensor.rank()), ']');
  return ValuePrinter(tensor, tensor.size() > threshold, edge_items).print();
}

std::string describe_tensor(const std::string& name, const Tensor& tensor) {
  return name + " [dtype=" + dtype_name(tensor.dtype()) + ", shape=" + python_tuple(tensor.shape()) + "]";
}

std::string summarize_tensor(const std::string& name, const Tensor& tensor, bool values) {
  std::string out = describe_tensor(name, tensor) + " | " + stats_text(tensor);
  if (values) out += "\n" + indent_block(format_values(tensor), 4);
  return out;
}

}  // namespace vkg
