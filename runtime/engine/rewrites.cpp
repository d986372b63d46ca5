#include "runtime/engine/rewrites.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace vkg {

const char* rewrite_kind_name(RewriteKind kind) {
  switch (kind) {
    case RewriteKind::NoopAlias: return "noop-alias";
    case RewriteKind::IdentityArithmetic: return "identity-arithmetic";
    case RewriteKind::FuseUpsample: return "fuse-upsample";
    case RewriteKind::FoldBatchNorm: return "fold-batchnorm";
    case RewriteKind::FoldBias: return "fold-bias";
    case RewriteKind::ElementwiseChain: return "elementwise-chain";
    case RewriteKind::FuseActivation: return "fuse-activation";
    case RewriteKind::PostScale: return "post-scale";
    case RewriteKind::SqueezeGate: return "squeeze-gate";
    case RewriteKind::TransposePair: return "transpose-pair";
    case RewriteKind::LayerNormPattern: return "layernorm-pattern";
    case RewriteKind::ReformatOnUpload: return "reformat-on-upload";
    case RewriteKind::ReformatFp32Read: return "reformat-fp32-read";
    case RewriteKind::ReformatFp32Write: return "reformat-fp32-write";
    case RewriteKind::ReformatOutputFp32: return "reformat-output-f32";
    case RewriteKind::ConcatElimination: return "concat-elimination";
    case RewriteKind::RangeCopyView: return "range-copy-view";
    case RewriteKind::FoldTranspose: return "fold-transpose";
  }
  return "?";
}

const std::vector<RewriteKind>& all_rewrite_kinds() {
  static const std::vector<RewriteKind> kinds = {
      RewriteKind::NoopAlias,          RewriteKind::IdentityArithmetic, RewriteKind::FuseUpsample,
      RewriteKind::FoldBatchNorm,      RewriteKind::FoldBias,           RewriteKind::ElementwiseChain,
      RewriteKind::FuseActivation,     RewriteKind::PostScale,          RewriteKind::SqueezeGate,
      RewriteKind::TransposePair,      RewriteKind::LayerNormPattern,   RewriteKind::ReformatOnUpload,
      RewriteKind::ReformatFp32Read,   RewriteKind::ReformatFp32Write,  RewriteKind::ReformatOutputFp32,
      RewriteKind::ConcatElimination,  RewriteKind::RangeCopyView,      RewriteKind::FoldTranspose};
  return kinds;
}

std::optional<RewriteKind> parse_rewrite_kind(std::string_view name) {
  for (RewriteKind k : all_rewrite_kinds())
    if (name == rewrite_kind_name(k)) return k;
  return std::nullopt;
}

std::string rewrite_kind_list() {
  std::string list;
  for (RewriteKind k : all_rewrite_kinds()) list += (list.empty() ? "" : ", ") + std::string(rewrite_kind_name(k));
  return list;
}

RewriteSwitch parse_rewrite_switch(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::optional<RewriteKind> k = parse_rewrite_kind(kind);
  VKG_CHECK(k.has_value(), "--disable-rewrite '" << text << "': unknown rewrite kind '" << kind
                                                 << "' (the kinds: " << rewrite_kind_list() << ")");
  RewriteSwitch s{*k, colon == std::string::npos ? "" : text.substr(colon + 1)};
  VKG_CHECK(colon == std::string::npos || !s.node.empty(),
            "--disable-rewrite '" << text << "': give a node name after ':' (KIND or KIND:NODE)");
  return s;
}

std::string rewrite_switch_text(const RewriteSwitch& s) {
  return std::string(rewrite_kind_name(s.kind)) + (s.node.empty() ? "" : ":" + s.node);
}

namespace {

bool involves(const RewriteSwitch& s, RewriteKind kind, const std::string& subject,
              const std::vector<std::string>& nodes) {
  if (s.kind != kind) return false;
  return s.node.empty() || s.node == subject || std::find(nodes.begin(), nodes.end(), s.node) != nodes.end();
}

}  // namespace

bool RewriteFilter::allows(RewriteKind kind, const std::string& subject, const std::vector<std::string>& nodes) const {
  return fusion && std::none_of(disabled.begin(), disabled.end(),
                                [&](const RewriteSwitch& s) { return involves(s, kind, subject, nodes); });
}

bool rewrite_matches(const RewriteSwitch& s, const AppliedRewrite& rewrite) {
  return involves(s, rewrite.kind, rewrite.subject, rewrite.nodes);
}

std::string AppliedRewrite::id() const { return rewrite_switch_text({kind, subject}); }

std::string AppliedRewrite::describe() const {
  std::string list;
  for (const std::string& n : nodes) list += (list.empty() ? "" : ", ") + n;
  return std::string(rewrite_kind_name(kind)) + (layer.empty() ? " of '" + subject + "'" : " at layer '" + layer + "'") +
         " (nodes " + list + ")";
}

}  // namespace vkg
