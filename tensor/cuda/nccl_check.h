// Extends RETURN_IF_CUDA_ERROR and CHECK_CUDA (check.h) to NCCL calls.
#pragma once

#include <nccl.h>

#include <string>

#include "absl/status/status.h"
#include "tensor/cuda/check.h"

namespace ts::cuda {

inline bool call_succeeded(ncclResult_t e) { return e == ncclSuccess; }
std::string describe_error(ncclResult_t e);
// A peer that failed or vanished is Unavailable: the caller may tell the user
// which rank to look at, and it is not a bug in this process.
inline absl::StatusCode status_code_of(ncclResult_t e) {
  return e == ncclRemoteError || e == ncclSystemError ? absl::StatusCode::kUnavailable : absl::StatusCode::kInternal;
}

}  // namespace ts::cuda
