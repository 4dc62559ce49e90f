#include "nn/functional/cuda/cuda_kernels.h"

namespace ts::nn::functional {

const LayerKernels& cuda_kernels() {
  static const CudaKernels kernels;
  return kernels;
}

}  // namespace ts::nn::functional
