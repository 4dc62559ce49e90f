// Checking of CUDA runtime and cuBLAS calls: a failed call becomes a
// ts::Error (TS_CUDA_CHECK, in the op surface's kernels), an absl::Status
// (RETURN_IF_CUDA_ERROR, in the runtime layer and the collectives, where
// failure is a value) or, where neither can leave, a fatal message
// (CHECK_CUDA) - each naming the call, the file and the line. cudnn_check.h
// and nccl_check.h extend the same macros to cuDNN and NCCL.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "base/error.h"

namespace ts::cuda {

// Overloads per library; the macros below pick one by the call's return type.
inline bool call_succeeded(cudaError_t e) { return e == cudaSuccess; }
inline bool call_succeeded(cublasStatus_t e) { return e == CUBLAS_STATUS_SUCCESS; }
std::string describe_error(cudaError_t e);
std::string describe_error(cublasStatus_t e);

// Out of memory maps to ResourceExhausted so callers can tell it apart.
absl::StatusCode status_code_of(cudaError_t e);
inline absl::StatusCode status_code_of(cublasStatus_t e) {
  return e == CUBLAS_STATUS_ALLOC_FAILED ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
}

// "<error> in <call> at <file>:<line>"
absl::Status call_error(absl::StatusCode code, const std::string& error, const char* call, const char* file, int line);
[[noreturn]] void fatal_call_error(const std::string& error, const char* call, const char* file, int line);

}  // namespace ts::cuda

// Throws a ts::Error when a CUDA-library call fails.
#define TS_CUDA_CHECK(call)                                                                                  \
  do {                                                                                                       \
    const auto ts_cuda_result_ = (call);                                                                     \
    if (!::ts::cuda::call_succeeded(ts_cuda_result_)) {                                                      \
      throw ::ts::Error(::ts::cuda::call_error(::ts::cuda::status_code_of(ts_cuda_result_),                  \
                                               ::ts::cuda::describe_error(ts_cuda_result_), #call, __FILE__, \
                                               __LINE__));                                                   \
    }                                                                                                        \
  } while (false)

// Returns a Status from the enclosing function when a CUDA-library call fails.
#define RETURN_IF_CUDA_ERROR(call)                                                                           \
  do {                                                                                                       \
    const auto ts_cuda_result_ = (call);                                                                     \
    if (!::ts::cuda::call_succeeded(ts_cuda_result_)) {                                                      \
      return ::ts::cuda::call_error(::ts::cuda::status_code_of(ts_cuda_result_),                             \
                                    ::ts::cuda::describe_error(ts_cuda_result_), #call, __FILE__, __LINE__); \
    }                                                                                                        \
  } while (false)

// For places that cannot return a Status (destructors, deleters): a failure
// there means the process's CUDA state is broken, so it aborts with the message.
#define CHECK_CUDA(call)                                                                                    \
  do {                                                                                                      \
    const auto ts_cuda_result_ = (call);                                                                    \
    if (!::ts::cuda::call_succeeded(ts_cuda_result_)) {                                                     \
      ::ts::cuda::fatal_call_error(::ts::cuda::describe_error(ts_cuda_result_), #call, __FILE__, __LINE__); \
    }                                                                                                       \
  } while (false)
