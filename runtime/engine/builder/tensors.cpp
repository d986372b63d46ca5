// The engine's tensors as the build makes them: what folds into a constant at
// build time, each tensor's declared type and shape, the engine tensor of a
// name in each storage form (a reformat layer converts between forms where a
// layer needs the other), and constants copied into engine outputs. Every
// other step of the build asks here for the tensors it reads and writes.
#include <algorithm>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::builder_impl {

// A conversion between storage forms of one tensor (also used to copy a
// constant into an engine output): shaders/engine/reformat.comp.
LayerPlan reformat_plan(StorageType from, StorageType to, uint64_t n, const DeviceProfile& device,
                        std::optional<Tensor> constant) {
  LayerPlan plan;
  Dispatch d;
  const bool half = from == StorageType::F16 || to == StorageType::F16;
  d.shader = half ? "engine/reformat.f16" : "engine/reformat.f32";
  d.spec = {{0, kReformatLocalSize}, {1, uint32_t(from)}, {2, uint32_t(to)}};
  d.bindings = {constant ? add_weight(plan, std::move(*constant)) : BindingRef::input(0), BindingRef::output(0)};
  d.push = {uint32_t(n)};
  d.groups = linear_groups(n, kReformatLocalSize, device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

bool Builder::try_fold(const Node& node) {
  if (!node.subgraphs().empty()) return false;  // Ifs left by the import have a computed condition
  if (node.op_type == "Shape" || node.op_type == "Size") {
    const ValueInfo vi = info_of(node.inputs.at(0), node);
    const Shape shape = vi.concrete_shape();
    if (node.op_type == "Size") {
      folded_[node.outputs.at(0)] = Tensor::scalar<int64_t>(num_elements(shape));
      return true;
    }
    const int64_t rank = int64_t(shape.size());
    int64_t start = node.attr_int("start", 0), end = node.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    folded_[node.outputs.at(0)] =
        Tensor::from_vector<int64_t>({end - start}, std::vector<int64_t>(shape.begin() + start, shape.begin() + end));
    return true;
  }
  std::vector<const Tensor*> inputs;
  for (const std::string& in : node.inputs) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const Tensor* t = constant(in);
    if (t == nullptr) return false;
    inputs.push_back(t);
  }
  std::vector<Tensor> outs = run_reference_node(node, graph_.opset, inputs);
  for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i) {
    if (!node.outputs[i].empty()) folded_[node.outputs[i]] = std::move(outs[i]);
  }
  return true;
}

ValueInfo Builder::info_of(const std::string& name, const Node& node) const {
  if (const Tensor* t = constant(name)) {
    ValueInfo v;
    v.name = name;
    v.dtype = t->dtype();
    std::vector<Dim> dims;
    for (int64_t d : t->shape()) dims.push_back(Dim{d, ""});
    v.shape = dims;
    return v;
  }
  const ValueInfo* vi = find_info(name);
  VKG_CHECK(vi == nullptr || vi->dtype || !vi->static_shape(),
            node.describe() << ": tensor '" << name << "' has type/shape " << vi->describe()
                            << ": its data type is unknown or not one vkgraphy holds (numeric tensors only)");
  VKG_CHECK(vi != nullptr && vi->dtype && vi->static_shape(),
            node.describe() << ": tensor '" << name << "' has "
                            << (vi == nullptr ? std::string("no known type or shape") : "type/shape " + vi->describe())
                            << "; the Vulkan builder needs static shapes (use --input-shapes)");
  return *vi;
}

int32_t Builder::add_tensor(const std::string& name, DType dtype, const Shape& shape, StorageType storage) {
  EngineTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  t.storage = storage;
  result_.engine.tensors.push_back(std::move(t));
  const int32_t id = int32_t(result_.engine.tensors.size() - 1);
  tensors_[{name, storage}] = id;
  produced_storage_.emplace(name, storage);
  return id;
}

// The engine tensor holding `name` in `storage`, inserting a reformat layer when
// it exists only in another storage form.
int32_t Builder::tensor_in(const std::string& alias, StorageType storage) {
  const std::string name = resolve(alias);
  auto it = tensors_.find({name, storage});
  if (it != tensors_.end()) return it->second;
  auto produced = produced_storage_.find(name);
  VKG_CHECK(produced != produced_storage_.end(), "tensor '" << name << "' is used before it is produced");
  const int32_t src = tensors_.at({name, produced->second});
  const EngineTensor source = result_.engine.tensors[size_t(src)];
  VKG_CHECK(source.storage != StorageType::I32 && storage != StorageType::I32,
            "tensor '" << name << "' cannot be converted between integer and float storage");
  EngineTensor t = source;
  t.name = name + ":" + storage_type_name(storage);
  t.storage = storage;
  t.slot = -1;
  result_.engine.tensors.push_back(t);
  const int32_t id = int32_t(result_.engine.tensors.size() - 1);
  tensors_[{name, storage}] = id;

  EngineLayer layer;
  layer.name = name + " reformat " + storage_type_name(source.storage) + "->" + storage_type_name(storage);
  layer.op = "Reformat";
  layer.tactic = std::string("reformat.") + storage_type_name(source.storage) + "_to_" + storage_type_name(storage);
  layer.precision = Precision::FP32;
  layer.inputs = {src};
  layer.outputs = {id};
  layer.plan = reformat_plan(source.storage, storage, uint64_t(num_elements(source.shape)), device_, std::nullopt);
  result_.engine.layers.push_back(std::move(layer));
  ++result_.stats.reformats;
  return id;
}

void Builder::add_constant_output(const std::string& name) {
  const Tensor* value = constant(name);
  const std::optional<StorageType> storage = storage_for(value->dtype(), Precision::FP32);
  VKG_CHECK(storage.has_value(), "output '" << name << "' is " << dtype_name(value->dtype())
                                            << ", which the Vulkan backend does not support");
  const int32_t id = add_tensor(name, value->dtype(), value->shape(), *storage);
  EngineLayer layer;
  layer.name = name + " constant";
  layer.op = "Constant";
  layer.tactic = "constant.copy";
  layer.outputs = {id};
  layer.plan = reformat_plan(*storage, *storage, uint64_t(value->size()), device_,
                             to_storage(*value, *storage, "constant '" + name + "'"));
  result_.engine.layers.push_back(std::move(layer));
}

}  // namespace vkg::builder_impl
