#include "debug/model_lint_graph.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <numeric>
#include <set>

#include "runtime/core/dtype.h"
#include "runtime/onnx/surgeon.h"

namespace vkg::debug {

namespace {

// "float32 [1,3,?]", "? [...]" for an unknown type, "float32" for an unknown rank.
std::string describe_type(const onnx::TypeProto& type) {
  const auto& t = type.tensor_type();
  const std::optional<DType> dtype = dtype_from_onnx(t.elem_type());
  std::string text = dtype ? dtype_name(*dtype) : "?";
  if (!t.has_shape()) return text;
  text += " [";
  for (int d = 0; d < t.shape().dim_size(); ++d) {
    const auto& dim = t.shape().dim(d);
    text += (d ? "," : "") + (dim.has_dim_value() ? std::to_string(dim.dim_value()) : std::string("?"));
  }
  return text + "]";
}

// Whether two tensor types disagree where both are known.
bool contradict(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  if (!a.has_tensor_type() || !b.has_tensor_type()) return false;
  const auto& ta = a.tensor_type();
  const auto& tb = b.tensor_type();
  if (ta.elem_type() != 0 && tb.elem_type() != 0 && ta.elem_type() != tb.elem_type()) return true;
  if (!ta.has_shape() || !tb.has_shape()) return false;
  if (ta.shape().dim_size() != tb.shape().dim_size()) return true;
  for (int d = 0; d < ta.shape().dim_size(); ++d) {
    const auto& da = ta.shape().dim(d);
    const auto& db = tb.shape().dim(d);
    if (da.has_dim_value() && db.has_dim_value() && da.dim_value() != db.dim_value()) return true;
  }
  return false;
}

// The disjoint-set forest of the parts finder.
int find_root(std::vector<int>& parent, int i) {
  while (parent[size_t(i)] != i) i = parent[size_t(i)] = parent[size_t(parent[size_t(i)])];
  return i;
}

}  // namespace

std::vector<bool> nodes_the_outputs_need(const onnx::GraphProto& g, std::set<std::string>* read) {
  const GraphIndex index(g);
  std::vector<bool> needed(size_t(g.node_size()), false);
  std::set<std::string> seen;
  std::vector<std::string> todo;
  for (const auto& out : g.output()) todo.push_back(out.name());
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!seen.insert(name).second) continue;
    auto p = index.producer.find(name);
    if (p == index.producer.end() || needed[size_t(p->second)]) continue;
    needed[size_t(p->second)] = true;
    for (const std::string& in : node_reads(g.node(p->second))) todo.push_back(in);
  }
  if (read) *read = std::move(seen);
  return needed;
}

std::vector<std::string> report_unused(const onnx::GraphProto& g, LintReport& report) {
  const GraphIndex index(g);
  std::set<std::string> read;
  const std::vector<bool> needed = nodes_the_outputs_need(g, &read);
  for (const std::string& in : index.graph_inputs)  // sorted
    if (!read.count(in))
      report.add({LintLevel::Warning, LintSource::Graph, "Input: '" + in + "' does not affect outputs, can be removed.", {}});
  std::vector<std::string> unused;
  for (int i = 0; i < g.node_size(); ++i)
    if (!needed[size_t(i)]) unused.push_back(g.node(i).name());
  std::sort(unused.begin(), unused.end());
  for (const std::string& name : unused)
    report.add({LintLevel::Warning, LintSource::Graph, "Does not affect outputs, can be removed.", {name}});
  return unused;
}

void report_recorded_shapes(const OnnxModel& model, LintReport& report) {
  OnnxModel inferred = copy_onnx_model(model);
  try {
    infer_shapes(inferred, /*strict=*/false);
  } catch (const std::exception&) {
    return;  // the runs have said what is wrong
  }
  std::map<std::string, const onnx::TypeProto*> found;
  for (const auto& vi : inferred.proto->graph().value_info()) found.emplace(vi.name(), &vi.type());
  const GraphIndex index(model.proto->graph());
  for (const auto& vi : model.proto->graph().value_info()) {
    auto it = found.find(vi.name());
    if (it == found.end() || !contradict(vi.type(), *it->second)) continue;
    std::vector<std::string> nodes;
    if (auto p = index.producer.find(vi.name()); p != index.producer.end())
      nodes.push_back(model.proto->graph().node(p->second).name());
    report.add({LintLevel::Warning, LintSource::Graph,
                "Tensor '" + vi.name() + "': the model records " + describe_type(vi.type()) +
                    " in value_info, shape inference finds " + describe_type(*it->second),
                nodes});
  }
}

void report_unread_outputs(const onnx::GraphProto& g, LintReport& report) {
  std::set<std::string> read;
  for (const auto& n : g.node())
    for (const std::string& name : node_reads(n)) read.insert(name);
  for (const auto& out : g.output()) read.insert(out.name());
  const std::vector<bool> needed = nodes_the_outputs_need(g, nullptr);
  for (int i = 0; i < g.node_size(); ++i) {
    if (!needed[size_t(i)]) continue;  // a node the outputs do not need has its own finding
    const onnx::NodeProto& n = g.node(i);
    for (const auto& out : n.output())
      if (!out.empty() && !read.count(out))
        report.add({LintLevel::Info, LintSource::Graph,
                    "Output '" + out + "' is never read (neither a graph output nor another node's input).",
                    {n.name()}});
  }
}

void report_disconnected_parts(const onnx::GraphProto& g, LintReport& report) {
  const GraphIndex index(g);
  std::vector<int> parent(size_t(g.node_size()));
  std::iota(parent.begin(), parent.end(), 0);
  std::map<std::string, int> toucher;  // a node that reads or writes each non-constant tensor
  auto join = [&](const std::string& tensor, int node) {
    if (tensor.empty() || index.initializers.count(tensor)) return;
    auto [it, first] = toucher.emplace(tensor, node);
    if (!first) parent[size_t(find_root(parent, node))] = find_root(parent, it->second);
  };
  const std::vector<bool> needed = nodes_the_outputs_need(g, nullptr);
  for (int i = 0; i < g.node_size(); ++i) {
    if (!needed[size_t(i)]) continue;  // a node the outputs do not need has its own finding
    for (const std::string& in : node_reads(g.node(i))) join(in, i);
    for (const auto& out : g.node(i).output()) join(out, i);
  }
  std::map<int, std::vector<int>> parts;  // root -> nodes, in graph order
  for (int i = 0; i < g.node_size(); ++i)
    if (needed[size_t(i)]) parts[find_root(parent, i)].push_back(i);
  if (parts.size() < 2) return;
  std::set<std::string> outputs;
  for (const auto& out : g.output()) outputs.insert(out.name());
  size_t k = 0;
  for (const auto& [root, members] : parts) {
    std::vector<std::string> nodes;
    std::string computes;
    for (int i : members) {
      nodes.push_back(g.node(i).name());
      for (const auto& out : g.node(i).output())
        if (outputs.count(out)) computes += (computes.empty() ? "'" : ", '") + out + "'";
    }
    report.add({LintLevel::Info, LintSource::Graph,
                "Part " + std::to_string(++k) + " of " + std::to_string(parts.size()) +
                    " parts of the graph that share no tensor: " + std::to_string(members.size()) + " node(s)" +
                    (computes.empty() ? ", computing no graph output" : ", computing " + computes),
                nodes});
  }
}

}  // namespace vkg::debug
