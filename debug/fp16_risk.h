// fp16-risk analysis: which nodes of a model see values that fp16 cannot hold,
// found from a reference run on real inputs. `debug precision` starts its search
// for a minimal set of fp32 layers from it; `inspect model --show fp16-risk`
// prints it.
//
// Every float32/float64 tensor a node reads (initializers included) or writes is
// checked, over every iteration of the data loader:
//  - overflow: finite values with |x| > 65504, the largest fp16 value (they
//    become inf in fp16);
//  - underflow: non-zero values with |x| < 2^-20, deep in fp16's subnormals
//    (4 significant bits or fewer; below 2^-25 they become 0), counted only
//    where they are not negligible next to the tensor's largest value
//    (|x| >= 1e-3 * max|x|), so that the tail of a softmax is not a risk while
//    a tensor that lives near zero is.
// A node is at risk when one of its tensors is. Risk says where fp16 goes wrong
// for certain; it cannot see overflow inside a kernel (a sum that grows past
// 65504 before it is scaled down), which the search itself still finds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::debug {

constexpr double kFp16Max = 65504.0;
constexpr double kFp16DeepSubnormal = 9.5367431640625e-07;  // 2^-20
constexpr double kUnderflowSignificance = 1e-3;             // of the tensor's max |x|

enum class Fp16Risk { None, Underflow, Overflow };  // in increasing order of severity
const char* fp16_risk_name(Fp16Risk risk);

// Statistics of one tensor at one node, over every iteration.
struct TensorRiskStats {
  std::string tensor;
  bool is_input = true;  // read by the node (else written)
  uint64_t elements = 0;
  uint64_t overflow = 0;   // |x| > kFp16Max (finite)
  uint64_t underflow = 0;  // 0 < |x| < kFp16DeepSubnormal and |x| >= kUnderflowSignificance * max|x|
  double max_abs = 0;      // over finite values

  Fp16Risk risk() const;
};

struct NodeRisk {
  std::string node;  // node name (unnamed nodes: "<Op>_<index>", as the builder names layers)
  std::string op;
  std::vector<TensorRiskStats> tensors;  // the node's float tensors, inputs then outputs

  Fp16Risk risk() const;  // the worst of its tensors
  // Orders nodes by how sure the risk is: the fraction of values out of range,
  // 1 + fraction for overflow, the fraction for underflow, 0 for none.
  double score() const;
};

// Accumulates node statistics over reference runs.
class Fp16RiskAnalysis {
 public:
  explicit Fp16RiskAnalysis(const Graph& graph);

  // An observer for ReferenceBackend::run; every run adds to the statistics.
  NodeObserver observer();

  // Every node of the graph with a float tensor, in graph order.
  const std::vector<NodeRisk>& nodes() const { return nodes_; }
  // The nodes at risk, most certain first.
  std::vector<const NodeRisk*> at_risk() const;

 private:
  void observe(size_t index, const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor>& outputs);

  std::vector<NodeRisk> nodes_;
  std::vector<std::string> names_;  // per graph node
  std::vector<long> slot_;          // per graph node: its entry in nodes_, -1 before its first run
};

// Runs the reference backend on every feed and analyses it.
Fp16RiskAnalysis analyze_fp16_risk(const Graph& graph, const std::vector<TensorMap>& feeds);

// The text `inspect model --show fp16-risk` prints: the nodes at risk with their
// tensors, then how many are safe.
std::string fp16_risk_text(const Fp16RiskAnalysis& analysis, size_t iterations);

}  // namespace vkg::debug
