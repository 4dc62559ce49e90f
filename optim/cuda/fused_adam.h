// The multi-tensor Adam/AdamW step on CUDA: every parameter of one device and
// dtype updated by a single kernel launch (multi_tensor.h), each block
// updating one chunk of one tensor with the rule in optim/adam_rule.h.
#pragma once

#include "absl/types/span.h"
#include "optim/adam_rule.h"

namespace ts::optim::cuda {

// Queues the step on the current stream of the updates' device. All updates
// must be on one CUDA device, of one floating dtype (f32, f64, f16, bf16;
// f16/bf16 compute in f32), contiguous, each grad and moment (and, with
// amsgrad, the maximum) of its param's shape; otherwise an error naming the
// first tensor at fault is thrown (ts::Error), and nothing runs.
void fused_adam_step(absl::Span<const AdamUpdate> updates);

}  // namespace ts::optim::cuda
