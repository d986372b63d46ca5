// An engine: a model compiled for one Vulkan device, as plain data. The
// builder makes it, the engine file (engine_file.h) stores it, the executor
// (runtime/vulkan/executor.h) runs it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/engine/layer_signature.h"
#include "runtime/engine/tactic.h"

namespace vkg {

// A tensor that lives in device memory while the engine runs.
struct EngineTensor {
  std::string name;
  DType dtype = DType::Float32;  // the model's dtype (what the host sees)
  Shape shape;
  StorageType storage = StorageType::F32;  // how the device holds it
  int32_t slot = -1;                        // memory plan: index into Engine::slots
  // A part of another tensor's memory (an eliminated Concat: its producers write their slices of
  // its output in place; an eliminated copy of a range of a tensor: its readers read the range in
  // place): tensor `view_of`, from byte `offset` of it on; -1 for memory of its own.
  // Its slot is view_of's; slot_offset() resolves views of views.
  int32_t view_of = -1;
  uint64_t offset = 0;

  uint64_t bytes() const { return uint64_t(num_elements(shape)) * storage_element_bytes(storage); }
};

// One layer: a node of the model (or a reformat the builder inserted between
// precisions) with the tactic that runs it.
struct EngineLayer {
  std::string name;     // node name, "conv1+bn1" for fused nodes (reformats: "<tensor> reformat f32->f16")
  std::vector<std::string> nodes;  // the ONNX nodes the layer runs (empty for reformats and constants)
  std::string op;       // ONNX op type ("Reformat" for inserted conversions)
  std::string tactic;   // "gemm.tile4x4.f32"
  Precision precision = Precision::FP32;
  std::string signature;            // LayerSignature::key()
  std::vector<int32_t> inputs;      // engine tensor per node input; -1 for omitted or build-time constant
  std::vector<int32_t> outputs;     // engine tensor per node output; -1 for omitted
  std::vector<int32_t> scratch_slots;  // memory slot per plan.scratch_bytes entry
  LayerPlan plan;
  // Layers of op "If" (a condition computed on the device) select a branch at run
  // time. Their branches are the layers right before them: branch_layers[0] layers
  // of the then branch, followed by branch_layers[1] of the else branch. Input 0 is
  // the condition; inputs 1..k are the then branch's results and k+1..2k the else
  // branch's, for the k outputs. The executor reads the condition back, runs the
  // layers of one branch, then this layer's dispatches for that branch: the first
  // branch_dispatches[0] copy the then results into the outputs, the next
  // branch_dispatches[1] the else results. Both empty for every other layer.
  std::vector<uint32_t> branch_layers;
  std::vector<uint32_t> branch_dispatches;
  // Where a branch could not be built at the engine's shapes: per branch, the error
  // the executor raises when the condition selects it ("" for a built branch; its
  // results are then -1 and it has no layers or dispatches). Empty when both are built.
  std::vector<std::string> branch_errors;
  // Layers of op "Loop" (a condition or trip count computed on the device) repeat
  // the branch_layers[0] layers right before them, the body. Their outputs are the
  // loop's state (the loop-carried values, which are the Loop's outputs, then the
  // iteration count and the condition where the body reads them); s = outputs.size().
  // Inputs: [0] the trip count (-1: loop_trip_count, or no limit when that is -1 too),
  // [1] the first condition (-1: true), [2, 2+s) each state's initial value (-1: a
  // weight), [2+s, 2+2s) the body's result for each state, [2+2s] the condition the
  // body computes (-1: true), then the outer tensors the body reads (kept alive across
  // iterations). The first branch_dispatches[0] dispatches set the state before the
  // first iteration, the next branch_dispatches[1] copy the body's results into it
  // after each. The executor reads the conditions (and a computed trip count) back.
  int64_t loop_trip_count = -1;

  bool is_branch() const { return !branch_layers.empty(); }
  bool is_loop() const { return is_branch() && op == "Loop"; }
};

struct Engine {
  // The format this vkgraphy writes; it also reads kOldestFormatVersion and later
  // (version 2 added branching layers, which a version-1 reader would misread; version 3 tensor
  // views, EngineTensor::view_of, which a version-2 reader would ignore).
  static constexpr uint32_t kFormatVersion = 3;
  static constexpr uint32_t kOldestFormatVersion = 1;

  std::string vkgraphy_version;
  DeviceIdentity device;   // the device the engine was built (and timed) on
  std::string model_name;
  std::vector<EngineTensor> tensors;
  std::vector<uint64_t> slots;     // memory plan: byte size of each reused device buffer
  std::vector<EngineLayer> layers;  // in execution order
  std::vector<int32_t> inputs;      // engine tensors fed by the host, in model input order
  std::vector<int32_t> outputs;     // engine tensors read back (model outputs, then marked tensors)
  std::map<std::string, std::vector<uint32_t>> spirv;  // every shader variant a dispatch names

  int32_t find_tensor(const std::string& name) const;  // -1 when absent
  // The tensor whose memory holds tensor t (t itself unless it is a view) and t's byte offset in
  // its slot.
  int32_t memory_root(int32_t t) const;
  uint64_t slot_offset(int32_t t) const;
  uint64_t activation_bytes() const;  // sum of slots
  uint64_t weight_bytes() const;      // sum of packed weights
};

// The control structure of an engine's layer list: a sequence of layers, where a
// branching layer (EngineLayer::is_branch) holds the blocks of its branches, a loop
// the block of its body.
// Every layer of the engine appears exactly once.
struct LayerBlock {
  struct Item {
    size_t layer = 0;                // index into Engine::layers
    std::vector<LayerBlock> branches;  // of a branching layer: then, else; of a loop: the body
  };
  std::vector<Item> items;  // in execution order
};

// The engine's layers as nested blocks. Throws Error naming `what` when a
// branching layer's counts do not fit the layers before it or the blocks of its
// enclosing branch.
LayerBlock layer_blocks(const Engine& engine, const std::string& what);

// Assigns a memory slot to every engine tensor and scratch buffer: a slot is
// reused by tensors whose lifetimes do not overlap; inputs and outputs get slots
// of their own. A loop's state lives from the first layer of its body. Fills tensor.slot, layer.scratch_slots and engine.slots.
void plan_memory(Engine& engine);

// Checks internal consistency (indices in range, bindings resolvable, shaders
// present, push constants within 128 bytes); throws Error naming `what` and the
// first problem. The engine loader and the builder both call it.
void validate_engine(const Engine& engine, const std::string& what);

}  // namespace vkg
