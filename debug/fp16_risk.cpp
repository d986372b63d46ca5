#include "debug/fp16_risk.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace vkg::debug {

namespace {

// Out-of-range counts of one tensor, given its largest finite magnitude.
struct Counts {
  uint64_t overflow = 0, underflow = 0;
};

double finite_max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double a = std::fabs(t.get_as_double(i));
    if (std::isfinite(a)) m = std::max(m, a);
  }
  return m;
}

Counts count(const Tensor& t, double max_abs) {
  Counts c;
  const double significant = kUnderflowSignificance * max_abs;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double a = std::fabs(t.get_as_double(i));
    if (!std::isfinite(a)) continue;
    if (a > kFp16Max) ++c.overflow;
    if (a > 0 && a < kFp16DeepSubnormal && a >= significant) ++c.underflow;
  }
  return c;
}

bool analysed(const Tensor* t) { return t && (t->dtype() == DType::Float32 || t->dtype() == DType::Float64); }

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

const char* fp16_risk_name(Fp16Risk risk) {
  switch (risk) {
    case Fp16Risk::None:
      return "none";
    case Fp16Risk::Underflow:
      return "underflow";
    case Fp16Risk::Overflow:
      return "overflow";
  }
  return "?";
}

Fp16Risk TensorRiskStats::risk() const {
  if (overflow > 0) return Fp16Risk::Overflow;
  if (underflow > 0) return Fp16Risk::Underflow;
  return Fp16Risk::None;
}

Fp16Risk NodeRisk::risk() const {
  Fp16Risk worst = Fp16Risk::None;
  for (const TensorRiskStats& t : tensors) worst = std::max(worst, t.risk());
  return worst;
}

double NodeRisk::score() const {
  double overflow = 0, underflow = 0;
  for (const TensorRiskStats& t : tensors) {
    if (t.elements == 0) continue;
    overflow = std::max(overflow, double(t.overflow) / double(t.elements));
    underflow = std::max(underflow, double(t.underflow) / double(t.elements));
  }
  return overflow > 0 ? 1 + overflow : underflow;
}

Fp16RiskAnalysis::Fp16RiskAnalysis(const Graph& graph) {
  std::set<std::string> taken = node_names_deep(graph);
  taken.erase("");
  names_ = layer_names(graph, "", taken);
  slot_.assign(graph.nodes.size(), -1);
}

NodeObserver Fp16RiskAnalysis::observer() {
  return [this](size_t index, const Node& node, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor>& outputs) { observe(index, node, inputs, outputs); };
}

void Fp16RiskAnalysis::observe(size_t index, const Node& node, const std::vector<const Tensor*>& inputs,
                               const std::vector<Tensor>& outputs) {
  VKG_CHECK(index < slot_.size(), "fp16-risk analysis: node '" << node.name << "' is not in the analysed graph");
  // The node's float tensors, inputs then outputs: the same list (and order) in every run.
  struct Seen {
    const std::string& name;
    const Tensor& tensor;
    bool is_input;
  };
  std::vector<Seen> seen;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (analysed(inputs[i])) seen.push_back({node.inputs[i], *inputs[i], true});
  for (size_t i = 0; i < outputs.size() && i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty() && analysed(&outputs[i])) seen.push_back({node.outputs[i], outputs[i], false});
  if (seen.empty()) return;
  if (slot_[index] < 0) {
    NodeRisk fresh;
    fresh.node = names_[index];
    fresh.op = node.op_type;
    for (const Seen& t : seen) fresh.tensors.push_back(TensorRiskStats{t.name, t.is_input});
    slot_[index] = long(nodes_.size());
    nodes_.push_back(std::move(fresh));
  }
  NodeRisk& risk = nodes_[size_t(slot_[index])];
  for (size_t k = 0; k < seen.size(); ++k) {
    TensorRiskStats& s = risk.tensors[k];
    // The max of this run decides what is negligible in it.
    const double max_abs = finite_max_abs(seen[k].tensor);
    const Counts c = count(seen[k].tensor, max_abs);
    s.elements += uint64_t(seen[k].tensor.size());
    s.overflow += c.overflow;
    s.underflow += c.underflow;
    s.max_abs = std::max(s.max_abs, max_abs);
  }
}

std::vector<const NodeRisk*> Fp16RiskAnalysis::at_risk() const {
  std::vector<const NodeRisk*> out;
  for (const NodeRisk& n : nodes_)
    if (n.risk() != Fp16Risk::None) out.push_back(&n);
  std::stable_sort(out.begin(), out.end(),
                   [](const NodeRisk* a, const NodeRisk* b) { return a->score() > b->score(); });
  return out;
}

Fp16RiskAnalysis analyze_fp16_risk(const Graph& graph, const std::vector<TensorMap>& feeds) {
  const ReferenceBackend backend(graph);
  Fp16RiskAnalysis analysis(graph);
  for (const TensorMap& feed : feeds) backend.run(feed, {}, analysis.observer());
  return analysis;
}

std::string fp16_risk_text(const Fp16RiskAnalysis& analysis, size_t iterations) {
  const std::vector<const NodeRisk*> risky = analysis.at_risk();
  const size_t total = analysis.nodes().size();
  std::string out = "==== fp16 risk (reference run, " + std::to_string(iterations) + " iteration(s)) ====\n";
  if (risky.empty()) {
    out += "All " + std::to_string(total) + " node(s) with float tensors hold values fp16 can represent";
    return out;
  }
  out += std::to_string(risky.size()) + " of " + std::to_string(total) +
         " node(s) with float tensors see values fp16 cannot hold (most certain first):\n";
  for (const NodeRisk* n : risky) {
    out += "  " + n->node + " (" + n->op + "): " + fp16_risk_name(n->risk()) + "\n";
    for (const TensorRiskStats& t : n->tensors) {
      if (t.risk() == Fp16Risk::None) continue;
      out += std::string("      ") + (t.is_input ? "input " : "output ") + "'" + t.tensor + "': ";
      if (t.overflow)
        out += std::to_string(t.overflow) + " of " + std::to_string(t.elements) + " value(s) beyond +-65504";
      if (t.overflow && t.underflow) out += ", ";
      if (t.underflow)
        out += std::to_string(t.underflow) + " of " + std::to_string(t.elements) +
               " value(s) deep in fp16's subnormals (0 < |x| < 2^-20)";
      out += " (max |x| " + sci(t.max_abs) + ")\n";
    }
  }
  out += "The other " + std::to_string(total - risky.size()) + " node(s) are fp16-safe on these inputs";
  return out;
}

}  // namespace vkg::debug
