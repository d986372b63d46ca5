// vkgraphy-variants: f32 f16acc32
// RNN, GRU and LSTM (runtime/tactics/recurrent.cpp): one workgroup per (direction,
// batch element) runs the whole sequence, the hidden state in shared memory, each
// invocation owning hidden units lid, lid + local size, ... Every step reads the input
// row and the previous hidden state, computes its units' gates (dot products in fp32),
// then a barrier publishes the new state. Arithmetic is fp32 in both variants.
// Bindings (absent optional ones bound to a dummy buffer the shader does not read):
//   0 X, 1 W [dirs, G*H, I], 2 R [dirs, G*H, H], 3 B [dirs, 2*G*H], 4 sequence_lens
//   (int32), 5 initial_h, 6 initial_c, 7 P [dirs, 3*H], 8 activations (float32:
//   [dirs][3 gates' functions][code, alpha, beta]), 9 Y, 10 Y_h, 11 Y_c.
// Push constants: see Params. Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kCell              0 RNN, 1 GRU, 2 LSTM
//   2 kMaxHidden         size of the shared state arrays (>= hidden)
//   3 kLinearBeforeReset GRU: r multiplies R_h h (1) or h before R_h (0)
//   4 kInputForget       LSTM: f = 1 - i
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "elementwise/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kCell = 0;
layout(constant_id = 2) const uint kMaxHidden = 64;
layout(constant_id = 3) const uint kLinearBeforeReset = 0;
layout(constant_id = 4) const uint kInputForget = 0;

const uint CELL_RNN = 0, CELL_GRU = 1, CELL_LSTM = 2;

layout(push_constant) uniform Params {
  uint seq;
  uint batch;
  uint input_size;
  uint hidden;
  uint directions;
  uint reverse;      // 1: the only direction runs backwards ("reverse")
  uint batch_first;  // layout 1: X [batch, seq, I], Y [batch, seq, dirs, H], states [batch, dirs, H]
  uint flags;        // bit 0: B given, 1: sequence_lens, 2: initial_h, 3: initial_c, 4: P,
                     // 5: write Y, 6: write Y_h, 7: write Y_c
  float clip;        // 0: none
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 2) readonly buffer R { sfp r[]; };
layout(binding = 3) readonly buffer B { sfp b[]; };
layout(binding = 4) readonly buffer Lens { int lens[]; };
layout(binding = 5) readonly buffer H0 { sfp h0[]; };
layout(binding = 6) readonly buffer C0 { sfp c0[]; };
layout(binding = 7) readonly buffer P { sfp peep[]; };
layout(binding = 8) readonly buffer Act { float act[]; };
layout(binding = 9) writeonly buffer Y { sfp y[]; };
layout(binding = 10) writeonly buffer YH { sfp y_h[]; };
layout(binding = 11) writeonly buffer YC { sfp y_c[]; };

shared float hs[kMaxHidden];  // the hidden state of the previous step
shared float hn[kMaxHidden];  // the new one
shared float cs[kMaxHidden];  // LSTM: the cell state (each unit's own)
shared float rh[kMaxHidden];  // GRU: r * h

bool flag(uint bit) { return (p.flags & (1u << bit)) != 0; }

#include "recurrent/activations.glsl"

float clipped(float v) { return clipped(p.clip, v); }

uint state_at(uint d, uint n) { return (p.batch_first != 0 ? n * p.directions + d : d * p.batch + n) * p.hidden; }

// Row `row` of W times x_t plus its bias, and of R times h (from shared `state`) plus its bias.
float input_dot(uint d, uint row, uint xoff) {
  const uint G = kCell == CELL_RNN ? 1 : kCell == CELL_GRU ? 3 : 4;
  const uint wrow = (d * G * p.hidden + row) * p.input_size;
  float s = flag(0) ? float(b[d * 2 * G * p.hidden + row]) : 0.0;
  for (uint i = 0; i < p.input_size; ++i) s += float(w[wrow + i]) * float(x[xoff + i]);
  return s;
}

float hidden_dot_h(uint d, uint row) {
  const uint G = kCell == CELL_RNN ? 1 : kCell == CELL_GRU ? 3 : 4;
  const uint rrow = (d * G * p.hidden + row) * p.hidden;
  float s = flag(0) ? float(b[d * 2 * G * p.hidden + G * p.hidden + row]) : 0.0;
  for (uint j = 0; j < p.hidden; ++j) s += float(r[rrow + j]) * hs[j];
  return s;
}

float hidden_dot_rh(uint d, uint row) {
  const uint G = 3;
  const uint rrow = (d * G * p.hidden + row) * p.hidden;
  float s = flag(0) ? float(b[d * 2 * G * p.hidden + G * p.hidden + row]) : 0.0;
  for (uint j = 0; j < p.hidden; ++j) s += float(r[rrow + j]) * rh[j];
  return s;
}

void main() {
  const uint d = gl_WorkGroupID.x % p.directions;
  const uint n = gl_WorkGroupID.x / p.directions;
  const uint lid = gl_LocalInvocationID.x, local = gl_WorkGroupSize.x;
  const uint H = p.hidden;
  const uint state = state_at(d, n);
  for (uint k = lid; k < H; k += local) {
    hs[k] = flag(2) ? float(h0[state + k]) : 0.0;
    cs[k] = flag(3) ? float(c0[state + k]) : 0.0;
  }
  barrier();
  const uint len = flag(1) ? uint(lens[n]) : p.seq;
  const bool backwards = p.reverse != 0 || d == 1;
  for (uint s = 0; s < len; ++s) {
    const uint t = backwards ? len - 1 - s : s;
    const uint xoff = (p.batch_first != 0 ? n * p.seq + t : t * p.batch + n) * p.input_size;
    if (kCell == CELL_GRU && kLinearBeforeReset == 0) {
      for (uint k = lid; k < H; k += local) rh[k] = activate(d, 0, clipped(input_dot(d, H + k, xoff) + hidden_dot_h(d, H + k))) * hs[k];
      barrier();
    }
    for (uint k = lid; k < H; k += local) {
      float next;
      if (kCell == CELL_RNN) {
        next = activate(d, 0, clipped(input_dot(d, k, xoff) + hidden_dot_h(d, k)));
      } else if (kCell == CELL_GRU) {
        const float z = activate(d, 0, clipped(input_dot(d, k, xoff) + hidden_dot_h(d, k)));
        float pre = input_dot(d, 2 * H + k, xoff);
        if (kLinearBeforeReset != 0) {
          const float rg = activate(d, 0, clipped(input_dot(d, H + k, xoff) + hidden_dot_h(d, H + k)));
          pre += rg * hidden_dot_h(d, 2 * H + k);
        } else {
          pre += hidden_dot_rh(d, 2 * H + k);
        }
        next = (1.0 - z) * activate(d, 1, clipped(pre)) + z * hs[k];
      } else {
        // Gates i, o, f, c; peepholes P = [Pi, Po, Pf].
        const uint pp = d * 3 * H;
        const float c_prev = cs[k];
        const float pi = flag(4) ? float(peep[pp + k]) : 0.0;
        const float po = flag(4) ? float(peep[pp + H + k]) : 0.0;
        const float pf = flag(4) ? float(peep[pp + 2 * H + k]) : 0.0;
        const float i = activate(d, 0, clipped(input_dot(d, k, xoff) + hidden_dot_h(d, k) + pi * c_prev));
        const float f = kInputForget != 0 ? 1.0 - i
                                          : activate(d, 0, clipped(input_dot(d, 2 * H + k, xoff) +
                                                                   hidden_dot_h(d, 2 * H + k) + pf * c_prev));
        const float cand = activate(d, 1, clipped(input_dot(d, 3 * H + k, xoff) + hidden_dot_h(d, 3 * H + k)));
        const float c = f * c_prev + i * cand;
        cs[k] = c;
        const float o = activate(d, 0, clipped(input_dot(d, H + k, xoff) + hidden_dot_h(d, H + k) + po * c));
        next = o * activate(d, 2, c);
      }
      hn[k] = next;
    }
    barrier();
    for (uint k = lid; k < H; k += local) {
      hs[k] = hn[k];
      if (flag(5)) {
        const uint yoff = (p.batch_first != 0 ? (n * p.seq + t) * p.directions + d : (t * p.directions + d) * p.batch + n) * H;
        y[yoff + k] = afp2sfp(hn[k]);
      }
    }
    barrier();
  }
  // Steps past this element's sequence length are zeros in Y.
  if (flag(5)) {
    for (uint t = len; t < p.seq; ++t) {
      const uint yoff = (p.batch_first != 0 ? (n * p.seq + t) * p.directions + d : (t * p.directions + d) * p.batch + n) * H;
      for (uint k = lid; k < H; k += local) y[yoff + k] = afp2sfp(0.0);
    }
  }
  for (uint k = lid; k < H; k += local) {
    if (flag(6)) y_h[state + k] = afp2sfp(hs[k]);
    if (flag(7)) y_c[state + k] = afp2sfp(cs[k]);
  }
}
