#include "tensor/cuda_gemm.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace ts {
namespace {

std::atomic<CudaGemmLibrary>& library_setting() {
  static std::atomic<CudaGemmLibrary> setting = [] {
    const char* env = std::getenv("TS_CUBLASLT");
    return value_or_throw(parse_cuda_gemm_library(env != nullptr ? env : "1"));
  }();
  return setting;
}

std::atomic<int64_t> cublaslt_products{0};
std::atomic<int64_t> cublas_products{0};

}  // namespace

absl::StatusOr<CudaGemmLibrary> parse_cuda_gemm_library(absl::string_view value) {
  if (value == "1") return CudaGemmLibrary::kCublasLt;
  if (value == "strict") return CudaGemmLibrary::kCublasLtStrict;
  if (value == "0") return CudaGemmLibrary::kCublas;
  return absl::InvalidArgumentError(
      absl::StrCat("TS_CUBLASLT=", value, ": expected 1 (cuBLASLt, cuBLAS where it cannot), strict or 0 (cuBLAS)"));
}

CudaGemmLibrary cuda_gemm_library() { return library_setting().load(std::memory_order_relaxed); }

void set_cuda_gemm_library(CudaGemmLibrary library) { library_setting().store(library, std::memory_order_relaxed); }

CudaGemmCounts cuda_gemm_counts() { return {cublaslt_products.load(), cublas_products.load()}; }

void count_cuda_gemm(CudaGemmLibrary ran) {
  (ran == CudaGemmLibrary::kCublas ? cublas_products : cublaslt_products).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace ts
