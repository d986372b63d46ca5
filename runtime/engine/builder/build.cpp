// The build loop: how a graph becomes an engine. The options are checked, the
// nodes named, the model's inputs become engine tensors, what can be folded is
// computed at build time, the graph optimizer groups the rest into layers,
// each layer is added (layer.cpp; If and Loop in control_flow.cpp), the
// model's outputs are bound, and the built engine's rewrites and memory plan
// (memory.cpp) finish it. Also build_engine, the one entry point.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <set>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/core/version.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/shader_library.h"

namespace vkg {
namespace builder_impl {

BuildResult Builder::build() {
  check_config();
  const std::vector<const Node*> nodes = name_layers();
  Engine& engine = result_.engine;
  engine.vkgraphy_version = VKGRAPHY_VERSION;
  engine.device = identity_;
  engine.model_name = graph_.name;
  result_.replay.device = identity_;

  add_model_inputs();
  const std::vector<const Node*> remaining = fold(nodes);
  const std::vector<std::string> outputs = user_read_tensors(remaining);
  add_layers(remaining, outputs);
  if (progress_line_) std::cerr << "\r\033[K" << std::flush;

  add_model_outputs(outputs);
  warn_unreplayed();
  finish_engine();
  return std::move(result_);
}

void Builder::check_config() {
  if (config_.random_seed) rng_.seed(*config_.random_seed);
  VKG_CHECK(config_.optimization_level >= 0 && config_.optimization_level <= 5,
            "--builder-optimization-level must be 0..5, not " << config_.optimization_level);
  decide_fp16();
  if (!config_.tactics_allow.empty() || !config_.tactics_deny.empty()) {
    const std::vector<const Tactic*> all = registry_.all();
    for (const auto& [flag, globs] :
         {std::pair{"--tactics-allow", &config_.tactics_allow}, std::pair{"--tactics-deny", &config_.tactics_deny}}) {
      for (const std::string& glob : *globs) {
        if (std::none_of(all.begin(), all.end(), [&](const Tactic* t) { return glob_match(glob, t->name); }))
          VKG_WARNING(flag << " '" << glob << "' matches no tactic, so it has no effect (tactic names look like "
                           << "gemm.block16x8.f32; `vkgraphy convert -v` lists each layer's candidates)");
      }
    }
  }
  if (!config_.layer_precisions.empty() && config_.constraints == PrecisionConstraints::None)
    VKG_WARNING("--layer-precisions are ignored with --precision-constraints none");
  const std::vector<std::string> unsupported = unsupported_vulkan_ops(graph_, registry_);
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    VKG_THROW("the Vulkan backend has no tactic for these ops: " << list);
  }
}

void Builder::decide_fp16() {
  if (config_.fp16 && !device_.fp16())
    VKG_WARNING("--fp16: device '" << device_.name << "' lacks fp16 arithmetic or 16-bit storage; building in fp32");
  fp16_everywhere_ =
      config_.fp16 && device_.fp16() &&
      (config_.fp16_policy == Fp16Policy::All || (config_.fp16_policy == Fp16Policy::Auto && device_.fp16_slower));
  if (fp16_everywhere_ && config_.fp16_policy == Fp16Policy::Auto) {
    // Once per process: the debug tools build many times.
    static std::atomic<bool> said{false};
    std::ostringstream msg;
    msg << "--fp16: fp16 arithmetic is slower than fp32 on device '" << device_.name
        << "', so every layer that can be fp16 is fp16 (--fp16-policy auto), with the numerics of an fp16 build on "
        << "a GPU; --fp16-policy fastest chooses by measured time instead";
    if (said.exchange(true))
      VKG_VERBOSE(msg.str());
    else
      VKG_INFO(msg.str());
  }
}

std::vector<const Node*> Builder::name_layers() {
  // Every layer needs a unique name (replays, --layer-precisions): unnamed nodes
  // become "<Op>_<index in the graph>" (in an If branch, "<If>/then/<Op>_<index>").
  names_ = node_names_deep(graph_);
  names_.erase("");
  scopes_ = {&graph_};
  const std::vector<const Node*> nodes = named_nodes(graph_, "");
  for (const auto& [name, pin] : config_.layer_precisions) {
    if (!is_layer_pattern(name)) {
      VKG_CHECK(names_.count(name),
                "--layer-precisions names layer '"
                    << name
                    << "', which the model does not have (or which import computed: Constant nodes and "
                       "nodes of constants are folded)");
    } else if (std::none_of(names_.begin(), names_.end(),
                            [&name = name](const std::string& n) { return layer_precision_matches(name, n); })) {
      VKG_WARNING("--layer-precisions pattern '" << name << "' matches no layer, so it has no effect");
    }
  }
  return nodes;
}

void Builder::add_model_inputs() {
  Engine& engine = result_.engine;
  for (const ValueInfo& in : graph_.inputs) {
    if (constant(in.name)) continue;
    Node input;
    input.op_type = "model input";
    input.name = in.name;
    const ValueInfo vi = info_of(in.name, input);
    const std::optional<StorageType> s = storage_for(*vi.dtype, Precision::FP32);
    VKG_CHECK(s.has_value(), "model input '" << in.name << "' is " << dtype_name(*vi.dtype)
                                             << ", which the Vulkan backend does not support");
    engine.inputs.push_back(add_tensor(in.name, *vi.dtype, vi.concrete_shape(), *s));
  }
}

std::vector<const Node*> Builder::fold(const std::vector<const Node*>& nodes) {
  std::vector<const Node*> remaining;
  for (const Node* node : nodes) {
    if (try_fold(*node)) {
      ++result_.stats.folded;
      continue;
    }
    remaining.push_back(node);
  }
  return remaining;
}

std::vector<std::string> Builder::user_read_tensors(const std::vector<const Node*>& remaining) {
  std::vector<std::string> outputs;
  for (const ValueInfo& out : graph_.outputs) outputs.push_back(out.name);
  if (config_.mark_all) {
    for (const Node* n : remaining)
      for (const std::string& o : n->outputs)
        if (!o.empty()) outputs.push_back(o);
  }
  for (const std::string& name : config_.mark_outputs) {
    const bool produced = std::any_of(remaining.begin(), remaining.end(), [&](const Node* n) {
      return std::find(n->outputs.begin(), n->outputs.end(), name) != n->outputs.end();
    });
    // Produced by a node left to run, folded to a constant, or a model input.
    VKG_CHECK(produced || constant(name) || produced_storage_.count(name),
              "cannot mark tensor '" << name << "' as an output: the model has no such tensor"
                                     << " (tensors inside an If branch are not always computed)");
    outputs.push_back(name);
  }
  return outputs;
}

void Builder::add_model_outputs(const std::vector<std::string>& outputs) {
  Engine& engine = result_.engine;
  std::set<std::string> seen;
  for (const std::string& name : outputs) {
    if (!seen.insert(name).second) continue;
    if (!produced_storage_.count(name)) {
      VKG_CHECK(constant(name) != nullptr, "model output '" << name << "' is never produced");
      add_constant_output(name);
    }
    engine.outputs.push_back(tensors_.at({name, produced_storage_.at(name)}));
  }
}

void Builder::warn_unreplayed() {
  if (unreplayed_.empty()) return;
  const size_t named = config_.replay->layers.size();
  std::string list;
  for (size_t i = 0; i < unreplayed_.size() && i < 5; ++i) list += (i ? ", " : "") + unreplayed_[i];
  if (unreplayed_.size() > 5) list += ", ...";
  VKG_WARNING("The tactic replay does not name "
              << unreplayed_.size() << " layer(s) of this build, chosen by timing (" << list << ")"
              << (unreplayed_.size() * 2 > result_.stats.layers
                      ? "; most layers are missing: is the replay (" + std::to_string(named) +
                            " layer(s)) from another model or other build "
                            "options?"
                      : ""));
}

void Builder::finish_engine() {
  Engine& engine = result_.engine;
  // The rewrites of the built engine; with fusion off (or them disabled) they leave it as it is.
  const RewriteFilter filter = rewrite_filter();
  std::vector<AppliedRewrite>& rewrites = result_.rewrites;
  const ReformatFusions fused = fuse_reformats(engine, filter, rewrites);
  result_.stats.inputs_converted_on_upload = fused.on_upload;
  result_.stats.reformats_fused = fused.into_layers;
  result_.stats.outputs_written_f32 = fused.outputs_f32;
  result_.stats.reformats -= fused.on_upload + fused.into_layers;
  result_.stats.concats_eliminated = eliminate_concats(engine, device_, filter, rewrites).size();
  result_.stats.copies_eliminated = eliminate_range_copies(engine, device_, filter, rewrites).size();
  if (Logger::get().enabled(Severity::Verbose, __FILE__)) {
    std::string list;
    for (const AppliedRewrite& r : rewrites) list += "\n    " + r.describe();
    VKG_VERBOSE("Applied " << rewrites.size() << " rewrite(s)" << (rewrites.empty() ? "" : ":") << list);
  }
  plan_memory(engine);
  for (const EngineLayer& l : engine.layers) {
    for (const Dispatch& d : l.plan.dispatches) {
      if (engine.spirv.count(d.shader)) continue;
      const auto words = builtin_shader(d.shader);
      engine.spirv[d.shader] = std::vector<uint32_t>(words.begin(), words.end());
    }
  }
  validate_engine(engine, "the built engine");
}

std::vector<const Node*> Builder::named_nodes(const Graph& graph, const std::string& prefix) {
  std::vector<const Node*> out;
  const std::vector<std::string> names = layer_names(graph, prefix, names_);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node n = graph.nodes[i];
    n.name = names[i];
    nodes_.push_back(std::move(n));
    out.push_back(&nodes_.back());
  }
  return out;
}

void Builder::add_block(const std::vector<const Node*>& nodes, std::vector<std::string> keep) {
  add_layers(fold(nodes), std::move(keep));
}

void Builder::add_layers(const std::vector<const Node*>& remaining, std::vector<std::string> keep) {
  // An If's branches read tensors of this graph by name: keep those too.
  for (const Node* n : remaining)
    for (const std::string& read : Graph::outer_scope_reads(*n)) keep.push_back(read);
  GraphOptimizerOptions options;
  options.rewrites = rewrite_filter();
  options.opset = graph_.opset;
  options.keep_tensors.insert(keep.begin(), keep.end());
  options.shape_of = [&](const std::string& name) -> std::optional<Shape> {
    if (const Tensor* c = constant(name)) return c->shape();
    const ValueInfo* vi = find_info(name);
    if (vi == nullptr || !vi->static_shape()) return std::nullopt;
    return vi->concrete_shape();
  };
  options.is_float = [&](const std::string& name) {
    if (const Tensor* c = constant(name)) return is_float_dtype(c->dtype());
    const ValueInfo* vi = find_info(name);
    return vi != nullptr && vi->dtype && is_float_dtype(*vi->dtype);
  };
  OptimizedGraph optimized = optimize_graph(
      remaining, [&](const std::string& name) { return constant(name); }, options);
  for (auto& [name, target] : optimized.aliases) aliases_[name] = target;
  for (auto& [name, value] : optimized.constants) folded_[name] = std::move(value);
  result_.rewrites.insert(result_.rewrites.end(), optimized.rewrites.begin(), optimized.rewrites.end());
  result_.stats.removed += optimized.removed.size();
  for (const std::string& removed : optimized.removed) {
    VKG_VERBOSE("Removed no-op node '" << removed << "': its output shares its input's buffer");
    if (config_.layer_precisions.count(removed))
      VKG_WARNING("--layer-precisions pins node '" << removed
                                                   << "', which was removed as a no-op (it computes nothing)");
  }
  for (size_t i = 0; i < optimized.layers.size(); ++i) {
    const OptimizedLayer& l = optimized.layers[i];
    if (l.nodes.size() > 1) {
      result_.stats.fused += l.nodes.size() - 1;
      VKG_VERBOSE("Fused " << l.nodes.size() << " nodes into layer '" << l.node.name << "' (" << l.node.op_type << ")");
    }
    if (l.node.op_type == "If" && l.node.domain.empty())
      add_if(l.node, i, optimized.layers.size());
    else if (l.node.op_type == "Loop" && l.node.domain.empty())
      add_loop(l.node, i, optimized.layers.size());
    else
      add_layer(l.node, l.nodes, i, optimized.layers.size());
  }
}

void Builder::progress(size_t index, size_t total, const Node& node) {
  if (!config_.progress) return;
  std::cerr << "\r\033[K[builder] layer " << index + 1 << "/" << total << ": " << node.name << " (" << node.op_type
            << ")" << std::flush;
  progress_line_ = true;
}

}  // namespace builder_impl

BuildResult build_engine(const Graph& graph, const BuilderConfig& config, const DeviceProfile& device,
                         const DeviceIdentity& identity, PlanTimer* timer, const TacticRegistry& registry) {
  builder_impl::Builder builder(graph, config, device, identity, timer, registry);
  return builder.build();
}

}  // namespace vkg
