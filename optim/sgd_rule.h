// SGD's hyperparameters and its update of one element, written once for the
// CPU loop (optim/sgd.cc) and the fused CUDA kernel (optim/cuda/), so both
// compute the same thing in the same order: PyTorch's torch.optim.SGD.
#pragma once

#include <type_traits>

#include "tensor/host_device.h"
#include "tensor/tensor.h"

namespace ts::optim {

// torch.optim.SGD's options (lr, momentum, dampening, weight_decay, nesterov).
struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;  // L2 term added to the gradient: g += weight_decay * p
  bool nesterov = false;    // needs momentum > 0 and dampening == 0
};

// a * b and a + b rounded once each: on the device the multiply must not fuse
// into an FMA, or CUDA results would differ from the CPU loop's (which is
// built with -ffp-contract=off) in the last bit.
template <typename C>
TS_HOST_DEVICE C mul_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>)
    return __fmul_rn(a, b);
  else
    return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <typename C>
TS_HOST_DEVICE C add_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>)
    return __fadd_rn(a, b);
  else
    return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// The options in the compute type C (float for f32/f16/bf16 parameters,
// double for f64), converted once per tensor rather than per element.
template <typename C>
struct SgdCoefficients {
  C lr, momentum, dampening_complement, weight_decay;
  bool nesterov;

  TS_HOST_DEVICE explicit SgdCoefficients(const SgdOptions& o)
      : lr(static_cast<C>(o.lr)),
        momentum(static_cast<C>(o.momentum)),
        dampening_complement(static_cast<C>(1.0 - o.dampening)),
        weight_decay(static_cast<C>(o.weight_decay)),
        nesterov(o.nesterov) {}
};

// One element of one step. `buf` is the momentum buffer element, used only
// when momentum != 0: it is set to the gradient on the parameter's first step
// (`first`, as PyTorch clones d_p into a fresh buffer) and updated in place
// after that. Returns the new parameter value:
//   g = grad + weight_decay * p
//   b = first ? g : momentum * b + (1 - dampening) * g
//   g = nesterov ? g + momentum * b : b
//   p = p - lr * g
template <typename C>
TS_HOST_DEVICE C sgd_element(C p, C g, C& buf, bool first, const SgdCoefficients<C>& k) {
  if (k.weight_decay != C(0)) g = add_rn(g, mul_rn(k.weight_decay, p));
  if (k.momentum != C(0)) {
    buf = first ? g : add_rn(mul_rn(k.momentum, buf), mul_rn(k.dampening_complement, g));
    g = k.nesterov ? add_rn(g, mul_rn(k.momentum, buf)) : buf;
  }
  return add_rn(p, -mul_rn(k.lr, g));
}

// One tensor's share of a step: what the CPU loop and the fused CUDA kernel
// take. Tensors are contiguous, of one floating dtype, on one device.
struct SgdUpdate {
  Tensor param;            // updated in place
  Tensor grad;             // param's shape
  Tensor momentum_buffer;  // updated in place; undefined when options.momentum == 0
  bool first = false;      // the buffer's first step: it takes the gradient
  SgdOptions options;
};

}  // namespace ts::optim
