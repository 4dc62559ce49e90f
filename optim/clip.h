// Gradient clipping by total norm, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include "absl/types/span.h"
#include "autograd/variable.h"

namespace ts::optim {

// The norm of order norm_type (> 0, or infinity for the largest magnitude)
// of all the gradients of `params` taken together, computed in f64 from
// per-tensor norms (f16/bf16 gradients are widened to f32 first, so their
// norms cannot overflow). When max_norm / (norm + 1e-6) < 1 every gradient
// is scaled by that factor, in place. Parameters without a gradient are
// skipped (no gradients: returns 0). A NaN or infinite norm throws, changing
// nothing, when error_if_nonfinite; otherwise the rule applies as written (an
// infinite norm scales by 0, a NaN one scales nothing) and the norm is
// returned. Invalid arguments and non-floating gradients throw too.
// One host synchronization per device.
double clip_grad_norm_(absl::Span<const autograd::Variable> params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

}  // namespace ts::optim
