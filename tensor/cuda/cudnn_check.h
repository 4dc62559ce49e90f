// Extends TS_CUDA_CHECK, RETURN_IF_CUDA_ERROR and CHECK_CUDA (check.h) to
// cuDNN calls: the macros pick these overloads by the call's return type.
#pragma once

#include <cudnn.h>

#include <string>

#include "absl/status/status.h"
#include "tensor/cuda/check.h"

namespace ts::cuda {

inline bool call_succeeded(cudnnStatus_t e) { return e == CUDNN_STATUS_SUCCESS; }
std::string describe_error(cudnnStatus_t e);
inline absl::StatusCode status_code_of(cudnnStatus_t e) {
  return e == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                 e == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
             ? absl::StatusCode::kResourceExhausted
             : absl::StatusCode::kInternal;
}

}  // namespace ts::cuda
