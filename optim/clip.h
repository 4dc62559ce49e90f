// Gradient clipping by total norm, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include "absl/types/span.h"
#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ts::optim {

// The norm of order norm_type (> 0, or infinity for the largest magnitude)
// of all the gradients of `params` taken together, computed in f64 from
// per-tensor norms (f16/bf16 gradients are widened to f32 first, so their
// norms cannot overflow), as a 0-dim f64 tensor on the first gradient's
// device. Every gradient is scaled in place by max_norm / (norm + 1e-6)
// clamped to at most 1, as torch's. Parameters without a gradient are
// skipped (no gradients: returns 0). A NaN or infinite norm throws, changing
// nothing, when error_if_nonfinite; otherwise the rule applies as written,
// as in torch 2.x: an infinite norm scales by 0, a NaN one makes every
// gradient NaN. Invalid arguments and non-floating gradients throw too.
// Nothing is read back to the host (no synchronization with a GPU) unless
// error_if_nonfinite, as torch's; gradients on several devices are combined
// through copies between them, which do wait.
Tensor clip_grad_norm_(absl::Span<const autograd::Variable> params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

}  // namespace ts::optim
