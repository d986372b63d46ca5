// The builder's graph rewrites as named, switchable units (docs/builder.md, "Rewrite kinds"):
// every rewrite the builder applies when fusion is on (graph_optimizer.h, and the passes over the
// built engine in builder/memory.cpp) has a kind with a stable name; `--disable-rewrite KIND[:NODE]`
// turns a kind off, everywhere or only where it would involve one ONNX node; and the builder
// records every rewrite it applied (BuildResult::rewrites), so that `debug rewrites` can find the
// one that makes an engine wrong. Plain data, free of Vulkan.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkg {

// In the order the builder applies them (the optimizer's, then the passes over the built engine).
enum class RewriteKind {
  NoopAlias,           // Identity, inference Dropout, Reshape, Flatten, Squeeze, Unsqueeze: output aliases input
  IdentityArithmetic,  // x * 1, x / 1 by constant ones: output aliases x
  FuseUpsample,        // a binary op reads a nearest Resize's input through the factors
  FoldBatchNorm,       // BatchNormalization folded into Conv/ConvTranspose/Gemm/MatMul weights
  FoldBias,            // Add/Sub/Mul/Div by a per-channel constant folded into those weights
  ElementwiseChain,    // a binary op absorbs the binary op that reads its result
  FuseActivation,      // an activation (or its written-out pattern) applied as the producer stores
  PostScale,           // Add/Sub/Mul/Div by single-element constants applied by the epilogue
  SqueezeGate,         // GlobalAveragePool + two pointwise Convs as one gate layer
  TransposePair,       // two upsampling ConvTransposes in a row as one layer
  LayerNormPattern,    // written-out layer norm as one LayerNormalization layer
  ReformatOnUpload,    // a model input read only through a reformat is converted while uploading
  ReformatFp32Read,    // fp16 layers read an fp32 tensor directly, instead of its f32->f16 reformat
  ReformatFp32Write,   // an fp16 layer stores its result in fp32, instead of an f16->f32 reformat
  ReformatOutputFp32,  // an fp16 layer writes an fp32 model output in fp32 (no host conversion)
  ConcatElimination,   // a Concat's inputs written in place into its output
  RangeCopyView,       // a copy of a contiguous range of a tensor becomes a view of it
  FoldTranspose,       // a MatMul reads a Transpose's input with its last two strides swapped
};

const char* rewrite_kind_name(RewriteKind kind);  // "noop-alias", ...
std::optional<RewriteKind> parse_rewrite_kind(std::string_view name);
const std::vector<RewriteKind>& all_rewrite_kinds();
std::string rewrite_kind_list();  // "noop-alias, identity-arithmetic, ..." (for --help and errors)

// One --disable-rewrite value: a kind, everywhere (`node` empty) or only where it would involve
// the ONNX node `node` (see AppliedRewrite: one of its nodes, or its subject).
struct RewriteSwitch {
  RewriteKind kind = RewriteKind::NoopAlias;
  std::string node;
  auto operator<=>(const RewriteSwitch&) const = default;
};
// Parses "KIND" or "KIND:NODE"; throws Error naming the known kinds for an unknown one.
RewriteSwitch parse_rewrite_switch(const std::string& text);
std::string rewrite_switch_text(const RewriteSwitch& s);  // "KIND" or "KIND:NODE"

// Which rewrites may apply: all but the disabled ones; none without fusion (--no-fusion, which is
// every kind disabled).
struct RewriteFilter {
  bool fusion = true;
  std::vector<RewriteSwitch> disabled;
  // Whether an instance of `kind` keyed by `subject` and involving `nodes` may apply.
  bool allows(RewriteKind kind, const std::string& subject, const std::vector<std::string>& nodes) const;
};

// A rewrite the builder applied.
struct AppliedRewrite {
  RewriteKind kind = RewriteKind::NoopAlias;
  // What identifies the instance from build to build, whatever other rewrites did: the node a
  // fusion absorbed (the first of a written-out activation), the node removed or eliminated, the
  // first node of a pattern made one layer (gate, transpose pair, layer norm), or, for the reformat
  // fusions, the tensor converted. `--disable-rewrite KIND:SUBJECT` disables this instance.
  std::string subject;
  // The engine layer it produced or changed (a fused layer's final name); "" for an alias.
  std::string layer;
  // The ONNX nodes involved: the absorbing node and the absorbed ones; the removed node of an
  // alias; a Concat or copy and the nodes of the layers that now write or hold its data; the nodes
  // of the layers that take over a reformat's conversion.
  std::vector<std::string> nodes;

  bool operator==(const AppliedRewrite&) const = default;
  // "fuse-activation:relu1", the --disable-rewrite value of this instance.
  std::string id() const;
  // "fuse-activation at layer 'conv1+relu1' (nodes conv1, relu1)".
  std::string describe() const;
};

// Whether `rewrite` is one that the fault switch (VKGRAPHY_FAULTY_REWRITES, a list of switches)
// names.
bool rewrite_matches(const RewriteSwitch& s, const AppliedRewrite& rewrite);

}  // namespace vkg
