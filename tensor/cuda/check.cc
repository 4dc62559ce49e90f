#include "tensor/cuda/check.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace ts::cuda {

std::string describe_error(cudaError_t e) {
  return absl::StrCat(cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
}

std::string describe_error(cublasStatus_t e) {
  return absl::StrCat(cublasGetStatusName(e), " (", cublasGetStatusString(e), ")");
}

absl::StatusCode status_code_of(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return absl::StatusCode::kResourceExhausted;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status call_error(absl::StatusCode code, const std::string& error, const char* call, const char* file, int line) {
  return absl::Status(code, absl::StrCat(error, " in ", call, " at ", file, ":", line));
}

void fatal_call_error(const std::string& error, const char* call, const char* file, int line) {
  std::fprintf(stderr, "fatal: %s in %s at %s:%d\n", error.c_str(), call, file, line);
  std::abort();
}

}  // namespace ts::cuda
