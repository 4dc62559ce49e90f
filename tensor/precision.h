// Process-wide numeric switches that kernels consult.
#pragma once

namespace ts {

// Lets f32 matrix products on CUDA use TF32 tensor cores (10-bit mantissa
// inputs, f32 accumulation). Off by default, as in PyTorch.
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace ts
