// vkgraphy-variants: f32 f16acc32
// One time step of RNN, GRU or LSTM for every (direction, batch element, hidden unit) at
// once: the step dispatches of recurrent.steps (runtime/tactics/recurrent.cpp), after
// recurrent/input_projection.comp. Dispatch s runs step s of every direction (a backward
// direction takes time len - 1 - s), reading the previous hidden state from Hin (or
// initial_h at s = 0) and writing the new one to Hout; the two state buffers swap between
// dispatches. Each invocation owns one unit's cell state in C. Past an element's sequence
// length the state is carried and Y is zero; the last step writes Y_h and Y_c. A GRU whose
// reset gate multiplies h before R_h (linear_before_reset 0) takes two dispatches per step:
// phase 0 writes r * h to RH, phase 1 the rest. Arithmetic is fp32 in both variants.
// Bindings (absent optional ones bound to a dummy buffer the shader does not read):
//   0 XW (fp32), 1 R [dirs, G*H, H], 2 B [dirs, 2*G*H], 3 sequence_lens (int32), 4 initial_h,
//   5 initial_c, 6 P [dirs, 3*H], 7 activations (see recurrent/activations.glsl), 8 Y, 9 Y_h,
//   10 Y_c, 11 Hin, 12 Hout, 13 C, 14 RH (fp32 scratch, [dirs][batch][H] each).
// Specialization constants: 0 (local_size_x_id) workgroup size, 1 kCell (0 RNN, 1 GRU,
// 2 LSTM), 3 kLinearBeforeReset, 4 kInputForget.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "elementwise/math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kCell = 0;
layout(constant_id = 3) const uint kLinearBeforeReset = 0;
layout(constant_id = 4) const uint kInputForget = 0;

const uint CELL_RNN = 0, CELL_GRU = 1, CELL_LSTM = 2;
const uint G = kCell == CELL_RNN ? 1 : kCell == CELL_GRU ? 3 : 4;

layout(push_constant) uniform Params {
  uint seq;
  uint batch;
  uint hidden;
  uint directions;
  uint reverse;      // 1: the only direction runs backwards ("reverse")
  uint batch_first;  // layout 1: Y [batch, seq, dirs, H], states [batch, dirs, H]
  uint flags;        // bit 0: B, 1: sequence_lens, 2: initial_h, 3: initial_c, 4: P,
                     // 5: write Y, 6: write Y_h, 7: write Y_c
  float clip;        // 0: none
  uint step;
  uint phase;        // GRU with linear_before_reset 0: 0 computes r * h, 1 the rest
} p;

layout(binding = 0) readonly buffer XW { float xw[]; };
layout(binding = 1) readonly buffer R { sfp r[]; };
layout(binding = 2) readonly buffer B { sfp b[]; };
layout(binding = 3) readonly buffer Lens { int lens[]; };
layout(binding = 4) readonly buffer H0 { sfp h0[]; };
layout(binding = 5) readonly buffer C0 { sfp c0[]; };
layout(binding = 6) readonly buffer P { sfp peep[]; };
layout(binding = 7) readonly buffer Act { float act[]; };
layout(binding = 8) writeonly buffer Y { sfp y[]; };
layout(binding = 9) writeonly buffer YH { sfp y_h[]; };
layout(binding = 10) writeonly buffer YC { sfp y_c[]; };
layout(binding = 11) readonly buffer Hin { float h_in[]; };
layout(binding = 12) writeonly buffer Hout { float h_out[]; };
layout(binding = 13) buffer C { float cs[]; };
layout(binding = 14) buffer RH { float rh[]; };

bool flag(uint bit) { return (p.flags & (1u << bit)) != 0; }

#include "recurrent/activations.glsl"

// Where unit 0 of (d, n) lies in a user state tensor (initial_h, Y_h, ...), and in the scratch ones.
uint user_state(uint d, uint n) { return (p.batch_first != 0 ? n * p.directions + d : d * p.batch + n) * p.hidden; }
uint own_state(uint d, uint n) { return (d * p.batch + n) * p.hidden; }

float h_prev(uint d, uint n, uint j) {
  if (p.step != 0) return h_in[own_state(d, n) + j];
  return flag(2) ? float(h0[user_state(d, n) + j]) : 0.0;
}

// Row `row` of R times the previous hidden state, plus its bias.
float hidden_dot(uint d, uint n, uint row) {
  const uint roff = (d * G * p.hidden + row) * p.hidden;
  float s = flag(0) ? float(b[(d * 2 + 1) * G * p.hidden + row]) : 0.0;
  if (p.step == 0 && !flag(2)) return s;
  if (p.step == 0) {
    const uint hoff = user_state(d, n);
    for (uint j = 0; j < p.hidden; ++j) s += float(r[roff + j]) * float(h0[hoff + j]);
  } else {
    const uint hoff = own_state(d, n);
    for (uint j = 0; j < p.hidden; ++j) s += float(r[roff + j]) * h_in[hoff + j];
  }
  return s;
}

// GRU, linear_before_reset 0: row `row` of R times r * h (phase 0's result), plus its bias.
float reset_dot(uint d, uint n, uint row) {
  const uint roff = (d * G * p.hidden + row) * p.hidden, hoff = own_state(d, n);
  float s = flag(0) ? float(b[(d * 2 + 1) * G * p.hidden + row]) : 0.0;
  for (uint j = 0; j < p.hidden; ++j) s += float(r[roff + j]) * rh[hoff + j];
  return s;
}

float gate(uint d, uint n, uint xrow, uint g, uint k) {
  return xw[xrow + g * p.hidden + k] + hidden_dot(d, n, g * p.hidden + k);
}

void main() {
  const uint k = gl_GlobalInvocationID.x;
  if (k >= p.hidden) return;
  const uint d = gl_WorkGroupID.y % p.directions, n = gl_WorkGroupID.y / p.directions;
  const uint H = p.hidden;
  const uint len = flag(1) ? min(uint(max(lens[n], 0)), p.seq) : p.seq;
  const bool running = p.step < len;
  const bool backwards = p.reverse != 0 || d == 1;
  const uint t = running && backwards ? len - 1 - p.step : p.step;
  const uint xrow = ((d * p.seq + t) * p.batch + n) * G * H;
  const uint own = own_state(d, n) + k;
  const float h_old = h_prev(d, n, k);

  if (kCell == CELL_GRU && kLinearBeforeReset == 0 && p.phase == 0) {
    if (running) rh[own] = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 1, k))) * h_old;
    return;
  }
  float c_old = 0.0;
  if (kCell == CELL_LSTM) c_old = p.step != 0 ? cs[own] : flag(3) ? float(c0[user_state(d, n) + k]) : 0.0;
  float h_new = h_old, c_new = c_old;
  if (running) {
    if (kCell == CELL_RNN) {
      h_new = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 0, k)));
    } else if (kCell == CELL_GRU) {
      const float z = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 0, k)));
      float pre = xw[xrow + 2 * H + k];
      if (kLinearBeforeReset != 0) {
        const float rg = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 1, k)));
        pre += rg * hidden_dot(d, n, 2 * H + k);
      } else {
        pre += reset_dot(d, n, 2 * H + k);
      }
      h_new = (1.0 - z) * activate(d, 1, clipped(p.clip, pre)) + z * h_old;
    } else {
      // Gates i, o, f, c; peepholes P = [Pi, Po, Pf].
      const uint pp = d * 3 * H;
      const float pi = flag(4) ? float(peep[pp + k]) : 0.0;
      const float po = flag(4) ? float(peep[pp + H + k]) : 0.0;
      const float pf = flag(4) ? float(peep[pp + 2 * H + k]) : 0.0;
      const float i = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 0, k) + pi * c_old));
      const float f = kInputForget != 0 ? 1.0 - i : activate(d, 0, clipped(p.clip, gate(d, n, xrow, 2, k) + pf * c_old));
      const float cand = activate(d, 1, clipped(p.clip, gate(d, n, xrow, 3, k)));
      c_new = f * c_old + i * cand;
      const float o = activate(d, 0, clipped(p.clip, gate(d, n, xrow, 1, k) + po * c_new));
      h_new = o * activate(d, 2, c_new);
    }
  }
  h_out[own] = h_new;
  if (kCell == CELL_LSTM) cs[own] = c_new;
  if (flag(5)) {
    const uint yoff = p.batch_first != 0 ? (n * p.seq + t) * p.directions + d : (t * p.directions + d) * p.batch + n;
    y[yoff * H + k] = afp2sfp(running ? h_new : 0.0);
  }
  if (p.step + 1 == p.seq) {
    if (flag(6)) y_h[user_state(d, n) + k] = afp2sfp(h_new);
    if (flag(7)) y_c[user_state(d, n) + k] = afp2sfp(c_new);
  }
}
