// Which library runs matrix products on CUDA (tensor/cuda/matmul.cu), and
// how many products each ran: a process-wide setting, like TF32's.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts {

enum class CudaGemmLibrary {
  // cuBLASLt; cuBLAS for a product it has no algorithm for or refuses at run
  // time (the refusal warned once per problem). The default: TS_CUBLASLT=1.
  kCublasLt,
  // cuBLASLt, and a product it cannot run is an error (the CUDA tests):
  // TS_CUBLASLT=strict.
  kCublasLtStrict,
  // cuBLAS alone: TS_CUBLASLT=0.
  kCublas,
};

// TS_CUBLASLT's value ("1", "strict" or "0"; unset is "1").
absl::StatusOr<CudaGemmLibrary> parse_cuda_gemm_library(absl::string_view value);

// The environment is read at the first call (a bad value throws, naming
// it); set_cuda_gemm_library overrides it for the rest of the process.
CudaGemmLibrary cuda_gemm_library();
void set_cuda_gemm_library(CudaGemmLibrary library);

// Products run through each library so far, so tests can tell which ran.
struct CudaGemmCounts {
  int64_t cublaslt = 0;
  int64_t cublas = 0;
};
CudaGemmCounts cuda_gemm_counts();
void count_cuda_gemm(CudaGemmLibrary ran);  // kCublasLt or kCublas; for the backend

}  // namespace ts
