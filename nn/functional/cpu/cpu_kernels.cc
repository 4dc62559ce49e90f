#include "nn/functional/cpu/cpu_kernels.h"

namespace ts::nn::functional {

const LayerKernels& cpu_kernels() {
  static const CpuKernels kernels;
  return kernels;
}

}  // namespace ts::nn::functional
