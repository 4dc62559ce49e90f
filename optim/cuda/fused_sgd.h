// The multi-tensor SGD step on CUDA: every parameter of one device and dtype
// updated by a single kernel launch, after apex's and PyTorch's
// multi_tensor_apply. A table of per-tensor pointers, sizes and options, and
// a list of (tensor, chunk) tasks, one per block, goes to device memory; each
// block updates one chunk of one tensor with the rule in optim/sgd_rule.h.
#pragma once

#include "absl/types/span.h"
#include "optim/sgd_rule.h"

namespace ts::optim::cuda {

// Queues the step on the current stream of the updates' device. All updates
// must be on one CUDA device, of one floating dtype (f32, f64, f16, bf16;
// f16/bf16 compute in f32), contiguous, each grad (and momentum buffer, when
// options.momentum != 0) of its param's shape; otherwise an error naming the
// first tensor at fault is thrown (ts::Error), and nothing runs. A failed
// launch throws too, naming the call.
void fused_sgd_step(absl::Span<const SgdUpdate> updates);

}  // namespace ts::optim::cuda
