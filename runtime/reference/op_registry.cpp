#include "runtime/reference/kernel.h"

namespace vkg {

const Tensor& KernelContext::input(size_t i) const {
  VKG_CHECK(has_input(i), node.describe() << ": input " << i << " is required but missing");
  return *inputs[i];
}

std::vector<Tensor> KernelContext::run(const Graph& body, const std::vector<Tensor>& inputs) const {
  VKG_CHECK(run_subgraph, node.describe() << ": its subgraphs run only as part of a whole graph");
  return (*run_subgraph)(body, inputs);
}

void OpRegistry::add(const std::string& op_type, RefKernel kernel) {
  // Two op families registering the same op is a programming error: the later would win silently.
  VKG_CHECK(kernels_.emplace(op_type, std::move(kernel)).second, "op '" << op_type << "' is registered twice");
}

const RefKernel* OpRegistry::find(const std::string& op_type) const {
  auto it = kernels_.find(op_type);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [name, k] : kernels_) out.push_back(name);
  return out;
}

const OpRegistry& OpRegistry::reference() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_linalg_ops(r);
    register_normalization_ops(r);
    register_shape_ops(r);
    register_resize_ops(r);
    register_recurrent_ops(r);
    register_control_flow_ops(r);
    register_attention_ops(r);
    register_grid_sample_ops(r);
    register_signal_ops(r);
    register_detection_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace vkg
