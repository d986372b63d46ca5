// Runs an Engine on a Vulkan device (an execution context): one device-local
// buffer per memory slot, packed weights uploaded once (in place or through
// staging, by the device's memory path), a pipeline per distinct (shader,
// specialization) and a descriptor set per dispatch, all created up front; the
// command buffer (input copies, the dispatches with a barrier before each one that
// depends on memory an earlier one since the last barrier wrote or read, runtime/vulkan/hazards.h;
// output copies, timestamps) is recorded once. Each run writes the inputs,
// resubmits that command buffer, waits and reads the outputs.
//
// An engine with branching layers (an If whose condition is computed on the
// device) is recorded as several command buffers: the work up to the condition
// (which ends by copying the condition to host memory), then each branch, then
// the work after it. A run submits the first, waits, reads the condition, and
// submits the recording of the branch it selects: one more submission and wait
// per branching layer executed, and the layers of the other branch cost nothing.
// A Loop whose condition or trip count is computed on the device is recorded the
// same way: its body (with the copies of its results into the loop state) is one
// recording, submitted once per iteration, each followed by reading the condition.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/rewrites.h"
#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/hazards.h"

namespace vkg::vk {

struct ExecutorOptions {
  // Testing switch (VKGRAPHY_FAULTY_TACTICS): every layer running one of these
  // tactics has its outputs overwritten with plainly wrong values after it runs.
  std::vector<std::string> faulty_tactics;
  // Testing switch (VKGRAPHY_FAULTY_LAYERS): the same for every layer whose
  // name or one of whose ONNX nodes matches one of these globs, so that a
  // fault can be put on one node whatever tactic runs it and whatever it was fused with.
  std::vector<std::string> faulty_layers;
  // Timestamps around every layer (last_layer_ns()), with a barrier after each so that layers do not
  // overlap and each one's time is its own.
  bool profile = false;
};

// The tactic names in VKGRAPHY_FAULTY_TACTICS (comma-separated); empty when unset.
std::vector<std::string> faulty_tactics_from_env();
// The node or layer names in VKGRAPHY_FAULTY_LAYERS (comma-separated); empty when unset.
std::vector<std::string> faulty_layers_from_env();

// The dispatch the fault switches add after a faulty layer for each of its
// outputs (`elements` values held as `storage`, bound as output 0):
// shaders/debug/fault.comp.
Dispatch fault_dispatch(StorageType storage, uint64_t elements, const DeviceInfo& info);

// The rewrite switches in VKGRAPHY_FAULTY_REWRITES (KIND[:NODE], comma-separated); empty when unset.
// Throws Error for an unknown kind.
std::vector<RewriteSwitch> faulty_rewrites_from_env();
// Testing switch (VKGRAPHY_FAULTY_REWRITES): makes `engine` itself wrong wherever one of `rewrites`
// (those its build applied) matches one of `faulty` (rewrite_matches): every layer holding a node
// of such a rewrite gets fault_dispatch after its own for each of its outputs, so the engine,
// saved and run anywhere, is wrong exactly when that rewrite applied. Warns per layer, and for a
// matching rewrite that no layer holds (an alias).
void add_rewrite_faults(Engine& engine, const std::vector<AppliedRewrite>& rewrites,
                        const std::vector<RewriteSwitch>& faulty, const DeviceInfo& info);

class EngineExecutor {
 public:
  // Creates every buffer, pipeline and descriptor set. Throws Error when the
  // engine needs fp16 and the device lacks it, or a resource cannot be created.
  EngineExecutor(Device& device, const Engine& engine, ExecutorOptions options = {});
  ~EngineExecutor();
  EngineExecutor(const EngineExecutor&) = delete;
  EngineExecutor& operator=(const EngineExecutor&) = delete;

  // Runs the engine once. `inputs` must hold every engine input with the
  // engine's dtype and shape (Error naming the input otherwise). Returns every
  // engine output (model outputs and marked tensors) in the model's dtypes.
  TensorMap run(const TensorMap& inputs);
  // The same with inputs the caller owns (numpy arrays from Python): each is uploaded from where
  // it lies when the device holds it in the dtype given, else converted on the host first.
  TensorMap run(const TensorViewMap& inputs);

  // One layer at a time, for per-layer isolation (slow: one submission and
  // wait per call; the recorded program is untouched). write_tensor puts a
  // host value into an engine tensor's buffer (in its storage form, through
  // staging where the host cannot map it); read_tensor returns a tensor's
  // current value in the model's dtype; run_layer submits that layer's
  // dispatches (and its fault-injection dispatches) alone and waits. A tensor's
  // buffer is a memory slot other tensors reuse: read a layer's outputs before
  // running the next layer. run_layer throws Error for a branching or loop
  // layer (those run only within run()).
  void write_tensor(int32_t tensor, const Tensor& value);
  Tensor read_tensor(int32_t tensor) const;
  void run_layer(size_t layer);

  // Device time of the last run in nanoseconds (0 when the device has no timestamps).
  double last_device_ns() const { return last_device_ns_; }
  // With options.profile: device time of each engine layer in the last run.
  const std::vector<double>& last_layer_ns() const { return last_layer_ns_; }
  // The dispatches and the barriers between them in the recorded command buffers (each
  // recording counted once, whether a run submits it once, never or once per loop iteration).
  size_t recorded_dispatches() const { return recorded_dispatches_; }
  size_t recorded_barriers() const { return recorded_barriers_; }

 private:
  struct Step {
    const ComputePipeline* pipeline;
    std::unique_ptr<DescriptorSet> set;
    const Dispatch* dispatch;
    std::vector<BufferAccess> accesses;
  };
  struct Fault {
    const ComputePipeline* pipeline;
    std::unique_ptr<DescriptorSet> set;
    uint32_t elements;
    std::array<uint32_t, 3> groups;
    std::vector<BufferAccess> accesses;
  };
  struct LayerSteps {
    std::vector<Step> steps;
    std::vector<Fault> faults;
  };

  // A run is a small program over the recorded command buffers.
  struct Instruction {
    enum class Kind { Submit, JumpIfFalse, Jump, Fail, LoopEnter, LoopTest, LoopBack } kind = Kind::Submit;
    // Submit: the recording; JumpIfFalse: the condition's host copy; Fail: the error; Loop*: the loop
    size_t index = 0;
    size_t target = 0;  // jumps: the instruction to go on with
  };
  struct Recording {
    std::unique_ptr<ComputeCommands> cmd;
    std::vector<std::pair<size_t, uint32_t>> layer_marks;  // (layer, timestamp query after it)
    uint32_t first_mark = 0, last_mark = 0;
  };
  // A recording being assembled: layers with the range of their dispatches to run.
  struct Pending {
    std::vector<std::tuple<size_t, size_t, size_t>> layers;  // (layer, first dispatch, end dispatch)
    std::vector<int32_t> readbacks;  // engine tensors to copy to host memory at the end (conditions_ in order)
  };
  // A loop of the program: host copies of its trip count and conditions, its count in this run.
  struct Loop {
    std::string name;
    int64_t trip_count = -1;  // build-time limit, -1: trip_count_host or none
    std::optional<size_t> trip_count_host, first_condition, body_condition;
    std::optional<size_t> condition;  // the one the next test reads
    int64_t limit = -1, iterations = 0;
  };
  // A loop with neither a trip count nor a condition that turns false is an error after this many.
  static constexpr int64_t kMaxLoopIterations = 1 << 24;

  const Buffer& tensor_buffer(int32_t tensor) const;  // its slot's buffer
  BufferRegion tensor_region(int32_t tensor) const;   // the slot's bytes it takes (a view: a part)
  // Compiles the engine's pipelines with compile workers where the device has them (compile_workers.h).
  void compile_ahead();
  void record();
  void emit(const LayerBlock& block, Pending& pending);
  void flush(Pending& pending, bool last);
  // Records a barrier: nothing recorded before it is pending any more.
  void barrier(ComputeCommands& cmd, HazardTracker& hazards);
  // Records a dispatch after a barrier where `hazards` says it must wait (always while profiling).
  void record_dispatch(ComputeCommands& cmd, HazardTracker& hazards, const std::vector<BufferAccess>& accesses,
                       const ComputePipeline& pipeline, const DescriptorSet& set, const std::array<uint32_t, 3>& groups,
                       const void* push, uint32_t push_bytes);
  int32_t read_condition(size_t index) const;
  const ComputePipeline& pipeline_for(const PipelineDesc& desc, const std::vector<uint32_t>& words);
  // The constructor's steps: the memory slots (with staging where the host cannot map an input's or
  // output's slot), the weights, then each layer's steps and the fault switches' dispatches after them.
  void create_slots();
  void upload_weights();
  void create_steps(size_t layer);
  void create_faults(size_t layer);
  // The regions a dispatch of `layer` binds, in binding order.
  std::vector<BufferRegion> dispatch_regions(size_t layer, const Dispatch& d) const;
  // run()'s steps: the inputs into their slots (or staging), the program, the outputs out of theirs.
  void upload_inputs(const TensorViewMap& inputs);
  void execute_program();
  TensorMap download_outputs() const;
  // Submits a recording, waits and adds its device time to last_device_ns_ (and its layers' to last_layer_ns_).
  void submit_recording(Recording& rec, bool timestamps);

  Device& device_;
  const Engine& engine_;
  ExecutorOptions options_;
  std::vector<Buffer> slots_;
  std::vector<std::vector<Buffer>> weights_;  // per layer
  std::map<std::string, std::shared_ptr<const ComputePipeline>> pipelines_;  // from the device's pool
  std::vector<LayerSteps> layers_;
  // Host-visible copies of the input/output slots that the host cannot map (by engine input/output position).
  std::vector<std::unique_ptr<Buffer>> input_staging_, output_staging_;
  std::vector<std::unique_ptr<Buffer>> conditions_;  // host copies of branch conditions, in recording order
  std::vector<Instruction> program_;
  std::vector<std::string> failures_;  // errors of branches that could not be built
  std::vector<Loop> loops_;
  std::vector<Recording> recordings_;  // last: destroyed before the buffers and pipelines they use
  double last_device_ns_ = 0;
  std::vector<double> last_layer_ns_;
  size_t recorded_dispatches_ = 0, recorded_barriers_ = 0;
};

}  // namespace vkg::vk
