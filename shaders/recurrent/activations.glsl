// The gate activations of RNN, GRU and LSTM (RecurrentFn in runtime/core/recurrence.h),
// read from the float32 buffer `act` ([dirs][3 slots: f, g, h][code, alpha, beta]),
// which the including shader declares. Arithmetic is fp32 in every variant.
float activate(uint d, uint slot, float v) {
  const uint base = (d * 3 + slot) * 3;
  const uint code = uint(act[base]);
  const float alpha = act[base + 1], beta = act[base + 2];
  switch (code) {
    case 0: return 1.0 / (1.0 + exp(-v));
    case 1: return vkg_tanh(v);
    case 2: return max(v, 0.0);
    case 3: return alpha * v + beta;
    case 4: return v >= 0.0 ? v : alpha * v;
    case 5: return v > alpha ? v : 0.0;
    case 6: return alpha * vkg_tanh(beta * v);
    case 7: return clamp(alpha * v + beta, 0.0, 1.0);
    case 8: return v >= 0.0 ? v : alpha * (exp(v) - 1.0);
    case 9: return v / (1.0 + abs(v));
    default: return v > 0.0 ? v + vkg_log1p(exp(-v)) : vkg_log1p(exp(v));
  }
}

// The pre-activation clipped to [-clip, clip]; clip 0 is none.
float clipped(float clip, float v) { return clip > 0.0 ? clamp(v, -clip, clip) : v; }
