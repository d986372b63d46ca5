// Shared by norm/row.comp and norm/workgroup.comp: operation codes (NormOp in
// runtime/tactics/reduce.cpp), the push constants and the bindings.
#ifndef VKG_NORM_OPS_GLSL
#define VKG_NORM_OPS_GLSL

const uint OP_LAYER = 0;          // (x - mean) * inv_std * scale[r] + bias[r], r the position in the row
const uint OP_INSTANCE = 1;       // (x - mean) * inv_std * scale[c] + bias[c], c = row % channels
const uint OP_MEAN_VARIANCE = 2;  // (x - mean) / (std + 1e-9)
const uint OP_MEAN_ONLY = 3;      // x - mean
const uint OP_L1 = 4;             // x / sum |x| (0 where the norm is 0)
const uint OP_L2 = 5;             // x / sqrt(sum x^2) (0 where the norm is 0)
const uint OP_RMS = 6;            // x * inv_rms * scale[r], r the position in the row (the mean pass sums nothing)
const uint OP_GROUP = 7;          // (x - mean) * inv_std * scale[c] + bias[c], c the element's channel

layout(push_constant) uniform Params {
  VKG_ROW_GEOMETRY
  float epsilon;      // added to the variance (OP_LAYER, OP_INSTANCE)
  uint scale_period;  // OP_LAYER, OP_RMS: scale is read at r % scale_period; OP_GROUP: elements per channel
  uint bias_period;   // OP_LAYER: bias is read at r % bias_period; OP_GROUP: channels per group
  uint channels;      // OP_INSTANCE: channels; OP_GROUP: groups
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 2) readonly buffer Scale { sfp scale[]; };
layout(binding = 3) readonly buffer Bias { sfp bias[]; };
layout(binding = 4) writeonly buffer Mean { sfp mean_out[]; };
layout(binding = 5) writeonly buffer InvStd { sfp inv_std_out[]; };

bool is_lp() { return kOp == OP_L1 || kOp == OP_L2; }

// What the statistics pass accumulates for element v (the mean pass for the
// mean-based ops, the norm for OP_L1 / OP_L2).
afp first_pass_term(afp v) {
  if (kOp == OP_L1) return abs(v);
  if (kOp == OP_L2) return v * v;
  if (kOp == OP_RMS) return afp(0);  // a zero mean: the deviation pass then sums x^2
  return v;
}

// The row's parameters once its statistics are known.
struct RowNorm {
  afp shift;      // subtracted from x
  afp factor;     // then multiplied (Lp: divided, see normalize_element())
  afp scale;      // OP_INSTANCE: the channel's scale and bias
  afp bias;
  uint first_channel;  // OP_GROUP: the group's first channel
};

// Statistics of a mean-based row: mean = sum / n, var = squared deviations / n.
// With write_stats, stores the row's Mean and InvStdDev where kStats asks.
RowNorm mean_row_norm(uint row, float mean, float var, bool write_stats) {
  RowNorm rn;
  rn.shift = afp(mean);
  rn.factor = afp(1);
  rn.scale = afp(1);
  rn.bias = afp(0);
  rn.first_channel = kOp == OP_GROUP ? (row % p.channels) * p.bias_period : 0u;
  if (kOp == OP_LAYER || kOp == OP_INSTANCE || kOp == OP_RMS || kOp == OP_GROUP) {
    const float inv_std = 1.0 / sqrt(var + p.epsilon);
    rn.factor = afp(inv_std);
    if (write_stats && (kStats & 1u) != 0) mean_out[row] = sfp(mean);
    if (write_stats && (kStats & 2u) != 0) inv_std_out[row] = sfp(inv_std);
  } else if (kOp == OP_MEAN_VARIANCE) {
    rn.factor = afp(1.0 / (sqrt(var) + 1e-9));
  }
  if (kOp == OP_INSTANCE) {
    const uint c = row % p.channels;
    rn.scale = sfp2afp(scale[c]);
    rn.bias = kHasBias != 0 ? sfp2afp(bias[c]) : afp(0);
  }
  return rn;
}

RowNorm lp_row_norm(float sum) {
  RowNorm rn;
  rn.shift = afp(0);
  rn.factor = afp(kOp == OP_L2 ? sqrt(sum) : sum);
  rn.scale = afp(1);
  rn.bias = afp(0);
  rn.first_channel = 0u;
  return rn;
}

// The output for element v at position r of the row.
afp normalize_element(RowNorm rn, afp v, uint r) {
  if (kOp == OP_L1 || kOp == OP_L2) return rn.factor == afp(0) ? afp(0) : v / rn.factor;
  afp result = (v - rn.shift) * rn.factor;
  if (kOp == OP_INSTANCE) return result * rn.scale + rn.bias;
  if (kOp == OP_GROUP) {
    const uint c = rn.first_channel + r / p.scale_period;
    return result * sfp2afp(scale[c]) + (kHasBias != 0 ? sfp2afp(bias[c]) : afp(0));
  }
  if (kOp == OP_LAYER || kOp == OP_RMS) {
    result *= sfp2afp(scale[r < p.scale_period ? r : r % p.scale_period]);
    if (kHasBias != 0) result += sfp2afp(bias[r < p.bias_period ? r : r % p.bias_period]);
  }
  return result;
}

#endif  // VKG_NORM_OPS_GLSL
