#include "tensor/cuda/cudnn_check.h"

namespace ts::cuda {

std::string describe_error(cudnnStatus_t e) {
  // cudnnGetErrorString gives the enumerator's name (CUDNN_STATUS_...).
  return cudnnGetErrorString(e);
}

}  // namespace ts::cuda
