#include "runtime/onnx/weight_strip.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/onnx/surgeon.h"

namespace vkg {

namespace {

// The graph's initializers by name (to strip or fill) and its producers (GraphIndex).
struct ModelIndex {
  const onnx::GraphProto& graph;
  const GraphIndex tensors;
  std::map<std::string, onnx::TensorProto*> initializers;

  explicit ModelIndex(onnx::GraphProto* g) : graph(*g), tensors(*g) {
    for (auto& t : *g->mutable_initializer()) initializers.emplace(t.name(), &t);
  }
  const onnx::NodeProto* producer(const std::string& tensor) const {
    auto it = tensors.producer.find(tensor);
    return it == tensors.producer.end() ? nullptr : &graph.node(it->second);
  }
};

int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

bool is_onnx_op_name(const std::string& op) { return onnx::OpSchemaRegistry::Schema(op, "") != nullptr; }

// Polygraphy's base patterns: ops with these input counts.
bool weight_op(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const int inputs = n.input_size();
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return inputs == 2 || inputs == 3;
  return op == "MatMul" && inputs == 2;
}

// Which weights a stripping pass takes, with Polygraphy's per-op rules.
class StripSelection {
 public:
  StripSelection(const ModelIndex& index, const std::set<std::string>& exclude) : index_(index), exclude_(exclude) {}

  void consider_inputs(const onnx::NodeProto& n) {
    for (int i = 0; i < n.input_size(); ++i) consider(n, n.input(i), i);
  }

  const std::set<std::string>& chosen() const { return chosen_; }
  const std::set<std::string>& excluded_found() const { return excluded_found_; }

 private:
  void consider(const onnx::NodeProto& n, const std::string& name, int position) {
    const std::string& op = n.op_type();
    if ((op == "QuantizeLinear" || op == "Slice") && position != 0) return;  // only their data input
    auto it = index_.initializers.find(name);
    if (it == index_.initializers.end()) return;
    if (it->second->data_type() == onnx::TensorProto::UINT8) return;
    if (exclude_.count(name) != 0) {
      excluded_found_.insert(name);
      return;
    }
    static const std::map<std::string, int64_t> kLeastElements = {
        {"Conv", 1}, {"ConvTranspose", 1}, {"Gemm", 1}, {"Gather", 1024}, {"Slice", 1024}};
    if (auto least = kLeastElements.find(op); least != kLeastElements.end() && element_count(*it->second) < least->second)
      return;
    chosen_.insert(name);
  }

  const ModelIndex& index_;
  const std::set<std::string>& exclude_;
  std::set<std::string> chosen_, excluded_found_;
};

// The inputs of a weight op at which Polygraphy's Q/DQ and Transpose patterns look.
std::vector<int> pattern_positions(const onnx::NodeProto& n) {
  if (n.op_type() == "Conv" || n.op_type() == "ConvTranspose") return {0};
  if (n.op_type() == "Gemm") return {0, 1, 2};
  return {0, 1};  // MatMul
}

// Each 2:4 candidate weight (an initializer feeding MatMul, Gemm or Conv, through Q/DQ, Cast and
// Transpose) with the axis its groups of four run along, as Polygraphy's sparsity pass finds them.
std::map<std::string, int> sparsity_axes(const onnx::GraphProto& g, const ModelIndex& index) {
  std::map<std::string, int> axes;
  auto track = [&](auto&& self, const std::string& tensor, int axis) -> void {
    if (index.initializers.count(tensor)) {
      axes[tensor] = axis;
      return;
    }
    const onnx::NodeProto* p = index.producer(tensor);
    if (p == nullptr || p->input_size() == 0) return;
    const std::string& op = p->op_type();
    if (op == "QuantizeLinear" || op == "DequantizeLinear" || op == "Cast") return self(self, p->input(0), axis);
    if (op != "Transpose") return;
    for (const auto& attr : p->attribute()) {
      if (attr.name() != "perm") continue;
      for (int k = 0; k < attr.ints_size(); ++k)
        if (attr.ints(k) == axis) return self(self, p->input(0), k);
    }
  };
  for (const auto& n : g.node()) {
    if (n.op_type() == "Conv" && n.input_size() > 1) track(track, n.input(1), 1);
    if (n.op_type() == "MatMul" && n.input_size() > 1) track(track, n.input(0), 1), track(track, n.input(1), 0);
    if (n.op_type() == "Gemm" && n.input_size() > 1) {
      int trans_a = 0, trans_b = 0;
      for (const auto& attr : n.attribute()) {
        if (attr.name() == "transA") trans_a = int(attr.i());
        if (attr.name() == "transB") trans_b = int(attr.i());
      }
      track(track, n.input(0), trans_a ? 0 : 1);
      track(track, n.input(1), trans_b ? 1 : 0);
    }
  }
  // Only float weights whose axis divides into groups of four.
  for (auto it = axes.begin(); it != axes.end();) {
    const onnx::TensorProto& t = *index.initializers.at(it->first);
    const bool floating = t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::FLOAT16 ||
                          t.data_type() == onnx::TensorProto::BFLOAT16;
    const bool fits = it->second < t.dims_size() && t.dims(it->second) % 4 == 0;
    it = floating && fits ? std::next(it) : axes.erase(it);
  }
  return axes;
}

// Calls f(first element index of the group, stride) for each group of four along `axis`.
template <class F> void for_each_group_of_four(const Tensor& t, int axis, const F& f) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= t.dim(i);
  for (int i = axis + 1; i < int(t.rank()); ++i) inner *= t.dim(i);
  const int64_t along = t.dim(axis);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t a = 0; a < along; a += 4) f((o * along + a) * inner + i, inner);
}

bool is_2_4_sparse(const Tensor& weight, int axis) {
  const Tensor t = weight.cast(DType::Float32);
  const float* v = t.data<float>();
  bool sparse = true;
  for_each_group_of_four(t, axis, [&](int64_t first, int64_t stride) {
    int zeros = 0;
    for (int k = 0; k < 4; ++k) zeros += v[first + k * stride] == 0.0f ? 1 : 0;
    sparse = sparse && zeros >= 2;
  });
  return sparse;
}

// Zeroes the two values of least magnitude in each group of four along `axis`.
void prune_2_4(Tensor& t, int axis) {
  float* v = t.data<float>();
  for_each_group_of_four(t, axis, [&](int64_t first, int64_t stride) {
    int order[4] = {0, 1, 2, 3};
    std::stable_sort(order, order + 4, [&](int a, int b) {
      return std::abs(v[first + a * stride]) < std::abs(v[first + b * stride]);
    });
    v[first + order[0] * stride] = 0;
    v[first + order[1] * stride] = 0;
  });
}

void clear_data(onnx::TensorProto& t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
}

}  // namespace

StripReport strip_weights(OnnxModel& model, const std::set<std::string>& exclude) {
  onnx::GraphProto* g = model.proto->mutable_graph();
  const ModelIndex index(g);
  StripSelection selection(index, exclude);
  for (const auto& n : g->node()) {
    const std::string& op = n.op_type();
    if (weight_op(n) || (op == "Gather" && n.input_size() == 2) ||
        (op == "Slice" && n.input_size() >= 3 && n.input_size() <= 5)) {
      selection.consider_inputs(n);
    } else if (!is_onnx_op_name(op)) {
      selection.consider_inputs(n);  // a plugin (Polygraphy: an op name ONNX does not define)
    }
    if (!weight_op(n)) continue;
    for (int position : pattern_positions(n)) {
      if (position >= n.input_size()) continue;
      const onnx::NodeProto* p = index.producer(n.input(position));
      if (p == nullptr) continue;
      if (p->op_type() == "Transpose" && p->input_size() == 1) selection.consider_inputs(*p);
      if (p->op_type() != "DequantizeLinear" || (p->input_size() != 2 && p->input_size() != 3)) continue;
      const onnx::NodeProto* q = index.producer(p->input(0));
      if (q != nullptr && q->op_type() == "QuantizeLinear" && (q->input_size() == 2 || q->input_size() == 3))
        selection.consider_inputs(*q);
    }
  }
  const std::map<std::string, int> axes = sparsity_axes(*g, index);
  StripReport report;
  for (const std::string& name : selection.chosen()) {
    onnx::TensorProto& t = *index.initializers.at(name);
    auto axis = axes.find(name);
    const bool sparse = axis != axes.end() && is_2_4_sparse(tensor_from_proto(t), axis->second);
    clear_data(t);
    t.set_doc_string(std::string(kWeightlessMark) + "/" + (sparse ? kSparseMark : ""));
    ++report.stripped;
  }
  for (const std::string& name : exclude)
    if (!selection.excluded_found().count(name)) report.excluded_not_found.insert(name);
  if (report.stripped > 0) {
    const std::string doc = model.proto->doc_string();
    model.proto->set_doc_string(doc.empty() ? kWeightlessMark : doc + "-" + kWeightlessMark);
  }
  return report;
}

size_t reconstruct_weights(OnnxModel& model, uint64_t seed) {
  onnx::GraphProto* g = model.proto->mutable_graph();
  const ModelIndex index(g);
  const std::map<std::string, int> axes = sparsity_axes(*g, index);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  size_t filled = 0;
  for (auto& t : *g->mutable_initializer()) {
    const std::string& doc = t.doc_string();
    if (doc.rfind(kWeightlessMark, 0) != 0) continue;
    const std::optional<DType> dtype = dtype_from_onnx(t.data_type());
    VKG_CHECK(dtype, "stripped initializer '" << t.name() << "' has an ONNX data type vkgraphy cannot fill ("
                                              << t.data_type() << ")");
    Shape shape(t.dims().begin(), t.dims().end());
    Tensor proxy(DType::Float32, shape);
    float* v = proxy.data<float>();
    for (int64_t i = 0; i < proxy.size(); ++i) v[i] = normal(rng);
    auto axis = axes.find(t.name());
    if (doc.find(kSparseMark) != std::string::npos && axis != axes.end()) prune_2_4(proxy, axis->second);
    onnx::TensorProto filled_proto;
    tensor_to_proto(proxy.cast(*dtype), t.name(), &filled_proto);
    clear_data(t);
    t.set_raw_data(filled_proto.raw_data());
    ++filled;
  }
  return filled;
}

}  // namespace vkg
