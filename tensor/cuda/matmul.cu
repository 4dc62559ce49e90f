// Batched matrix products through cuBLAS. cuBLAS is column-major, and a
// row-major matrix read column-major is its transpose, so the row-major
// out = a @ b is computed as the column-major out^T = b^T a^T with no copies:
// each operand is handed over as stored, transposed or not.
#include <cublas_v2.h>

#include <algorithm>
#include <climits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/precision.h"

namespace ts::cuda {
namespace {

// The calling thread's cuBLAS handle for `device` (handles must not be
// shared by concurrent threads), created on first use and destroyed when the
// thread exits.
cublasHandle_t cublas_handle(int device) {
  struct Handles {
    absl::flat_hash_map<int, cublasHandle_t> by_device;
    ~Handles() {
      // Errors are ignored: at process exit the CUDA context may already be
      // gone, and a failed destroy then is harmless.
      for (const auto& [index, handle] : by_device) cublasDestroy(handle);
    }
  };
  thread_local Handles handles;
  if (auto it = handles.by_device.find(device); it != handles.by_device.end()) return it->second;
  cublasHandle_t handle = nullptr;
  TS_CUDA_CHECK(cublasCreate(&handle));
  handles.by_device.emplace(device, handle);
  return handle;
}

// How cuBLAS reads a row-major [rows, cols] matrix with these strides (one of
// them 1, as the frontend guarantees) as a factor of the transposed product.
// With unit column stride its memory is, column-major, the transpose that
// the product wants: no op, leading dimension the row stride. With unit row
// stride its memory is the matrix itself, to be transposed.
struct GemmOperand {
  cublasOperation_t op;
  int64_t ld;
};

GemmOperand gemm_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (col_stride == 1 && row_stride >= std::max<int64_t>(cols, 1)) return {CUBLAS_OP_N, row_stride};
  return {CUBLAS_OP_T, std::max(col_stride, std::max<int64_t>(rows, 1))};
}

}  // namespace

void CudaBackend::matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (out.dtype()) {
    case DType::kF32:
      type = CUDA_R_32F;
      compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::kF16:  // tensor cores, f32 accumulation
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kBF16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kF64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default:
      no_kernel("cuda", "matmul", out.dtype());
  }
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const GemmOperand ga = gemm_operand(m, k, a.stride(1), a.stride(2));
  const GemmOperand gb = gemm_operand(k, n, b.stride(1), b.stride(2));
  for (const int64_t v : {batch, m, n, k, ga.ld, gb.ld}) {
    TS_CHECK(v <= INT_MAX, "cuda matmul: ", a.describe(), " @ ", b.describe(),
             " has a size or leading dimension beyond cuBLAS's int range");
  }
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cublasHandle_t handle = cublas_handle(device);
  TS_CUDA_CHECK(cublasSetStream(handle, current_stream(device)));
  // alpha and beta come in the compute type's scalar type.
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const bool f64 = compute == CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  TS_CUDA_CHECK(cublasGemmStridedBatchedEx(
      handle, gb.op, ga.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha, b.raw_data(), type,
      static_cast<int>(gb.ld), b.stride(0), a.raw_data(), type, static_cast<int>(ga.ld), a.stride(0), beta,
      out.raw_data(), type, static_cast<int>(n), m * n, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace ts::cuda
