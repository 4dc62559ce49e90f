// Process-wide numeric switches that kernels consult.
#pragma once

namespace ts {

// Lets f32 matrix products on CUDA use TF32 tensor cores (10-bit mantissa
// inputs, f32 accumulation). Off by default, as in PyTorch.
void set_allow_tf32(bool allow);
bool allow_tf32();

// Restricts the algorithms that libraries choose for us to those documented
// as bitwise deterministic run to run (cuDNN's convolutions; PyTorch's
// torch.backends.cudnn.deterministic). Our own kernels, CPU and CUDA, are
// deterministic either way. Off by default: it can cost speed.
void set_deterministic_algorithms(bool deterministic);
bool deterministic_algorithms();

}  // namespace ts
