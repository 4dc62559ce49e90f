// Adam's hyperparameters and its update of one element, written once for the
// CPU loop (optim/adam.cc) and the fused CUDA kernel (optim/cuda/), so both
// compute the same thing in the same order: torch.optim.Adam and AdamW
// (torch's single-tensor path, operation by operation).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "optim/sgd_rule.h"  // mul_rn, add_rn
#include "tensor/host_device.h"
#include "tensor/tensor.h"

namespace ts::optim {

// torch.optim.Adam's options; decoupled_weight_decay makes it AdamW
// (torch.optim.AdamW, whose default weight_decay is 1e-2 rather than 0).
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;  // added after the square root
  double weight_decay = 0;
  bool amsgrad = false;  // divide by the running maximum of the second moment
  bool decoupled_weight_decay = false;
};

// A step's bias-corrected scalars, formed on the host in double as torch
// forms them in Python floats, so that the CPU loop and the CUDA kernel use
// the same values. `step` counts this update (1 on the first).
struct AdamStepScalars {
  double step_size;              // lr / (1 - beta1^step)
  double bias_correction2_sqrt;  // sqrt(1 - beta2^step)
};
inline AdamStepScalars adam_step_scalars(const AdamOptions& o, int64_t step) {
  const double t = static_cast<double>(step);
  return {o.lr / (1 - std::pow(o.beta1, t)), std::sqrt(1 - std::pow(o.beta2, t))};
}

// The options and the step's scalars in the compute type C (float for
// f32/f16/bf16 parameters, double for f64), converted once per tensor.
template <typename C>
struct AdamCoefficients {
  C beta1_complement, beta2, beta2_complement, eps, weight_decay, decay_factor, step_size, bias_correction2_sqrt;
  bool amsgrad, decoupled;

  TS_HOST_DEVICE AdamCoefficients(const AdamOptions& o, const AdamStepScalars& s)
      : beta1_complement(static_cast<C>(1 - o.beta1)),
        beta2(static_cast<C>(o.beta2)),
        beta2_complement(static_cast<C>(1 - o.beta2)),
        eps(static_cast<C>(o.eps)),
        weight_decay(static_cast<C>(o.weight_decay)),
        // Rounded twice on the device too: a fused multiply-add there
        // would differ from the CPU's product and difference.
        decay_factor(static_cast<C>(add_rn(1.0, -mul_rn(o.lr, o.weight_decay)))),
        step_size(static_cast<C>(s.step_size)),
        bias_correction2_sqrt(static_cast<C>(s.bias_correction2_sqrt)),
        amsgrad(o.amsgrad),
        decoupled(o.decoupled_weight_decay) {}
};

// sqrt(x) and a / b correctly rounded on the host and the device alike.
template <typename C>
TS_HOST_DEVICE C sqrt_rn(C x) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>)
    return __fsqrt_rn(x);
  else
    return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
template <typename C>
TS_HOST_DEVICE C div_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>)
    return __fdiv_rn(a, b);
  else
    return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// torch.lerp(a, b, w) for a scalar weight, as ATen evaluates it.
template <typename C>
TS_HOST_DEVICE C lerp_rn(C a, C b, C w) {
  return w < C(0.5) ? add_rn(a, mul_rn(w, add_rn(b, -a))) : add_rn(b, -mul_rn(add_rn(b, -a), add_rn(C(1), -w)));
}

// One element of one step; m, v (and v_max with amsgrad) are updated in
// place. Returns the new parameter value:
//   AdamW: p = p * (1 - lr * wd)          Adam: g = g + wd * p
//   m = lerp(m, g, 1 - beta1)
//   v = v * beta2 + (1 - beta2) * g * g
//   v_max = max(v_max, v)                  (amsgrad)
//   p = p - step_size * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps),
//   step_size = lr / (1 - beta1^t)
template <typename C>
TS_HOST_DEVICE C adam_element(C p, C g, C& m, C& v, C& v_max, const AdamCoefficients<C>& k) {
  if (k.weight_decay != C(0)) {
    if (k.decoupled) {
      p = mul_rn(p, k.decay_factor);
    } else {
      g = add_rn(g, mul_rn(k.weight_decay, p));
    }
  }
  m = lerp_rn(m, g, k.beta1_complement);
  v = add_rn(mul_rn(v, k.beta2), mul_rn(mul_rn(k.beta2_complement, g), g));
  C second = v;
  if (k.amsgrad) {
    // torch.maximum: NaN wins.
    v_max = (v_max < v || v != v) ? v : v_max;
    second = v_max;
  }
  const C denom = add_rn(div_rn(sqrt_rn(second), k.bias_correction2_sqrt), k.eps);
  return add_rn(p, mul_rn(-k.step_size, div_rn(m, denom)));
}

// One tensor's share of a step: what the CPU loop and the fused CUDA kernel
// take. Tensors are contiguous, of one floating dtype, on one device.
struct AdamUpdate {
  Tensor param;           // updated in place
  Tensor grad;            // param's shape
  Tensor exp_avg;         // updated in place
  Tensor exp_avg_sq;      // updated in place
  Tensor max_exp_avg_sq;  // updated in place; undefined without amsgrad
  AdamOptions options;
  AdamStepScalars scalars;
};

}  // namespace ts::optim
