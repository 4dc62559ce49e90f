// Which kernels run f32 convolutions, average pooling and LSTM layers on the
// CPU: oneDNN by default, or the hand-written reference kernels that f64
// always uses, to tell a oneDNN fault from ours while debugging. Batch norm
// and max pooling stay ours (their READMEs say why).
#pragma once

namespace ts::nn::functional {

// True when TS_CPU_REFERENCE=1 was set at the first call, or after
// set_cpu_reference_path(true).
bool cpu_reference_path();
// Overrides the environment for the rest of the process (tests run the same
// cases on both paths with it).
void set_cpu_reference_path(bool reference);

}  // namespace ts::nn::functional
