// CPU matrix products through OpenBLAS. Transposed operands are passed as
// transposes, never copied; f16/bf16 go through f32 (OpenBLAS has no f16
// GEMM), with the product rounded once.
#include <cblas.h>

#include <limits>

#include "base/error.h"
#include "tensor/cpu/cpu_backend.h"
#include "tensor/dtype_dispatch.h"

namespace ts::cpu {
namespace {

// How a [rows, cols] matrix with the given strides reads as a row-major
// operand: transposed or not, with its leading dimension.
struct GemmOperand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

GemmOperand gemm_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (col_stride == 1 && row_stride >= std::max<int64_t>(cols, 1)) return {CblasNoTrans, row_stride};
  return {CblasTrans, std::max<int64_t>(col_stride, std::max<int64_t>(rows, 1))};
}

template <typename T, typename Gemm>
void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, Gemm gemm) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const GemmOperand ga = gemm_operand(m, k, a.stride(1), a.stride(2));
  const GemmOperand gb = gemm_operand(k, n, b.stride(1), b.stride(2));
  // OpenBLAS takes its sizes as int: a larger one would wrap.
  for (const int64_t v : {m, n, k, ga.ld, gb.ld}) {
    TS_CHECK(v <= std::numeric_limits<blasint>::max(), "matmul: ", a.describe(), " x ", b.describe(),
             " has a size or leading dimension of ", v, ", past what OpenBLAS takes (",
             std::numeric_limits<blasint>::max(), ")");
  }
  const T* pa = static_cast<const T*>(a.raw_data());
  const T* pb = static_cast<const T*>(b.raw_data());
  T* po = static_cast<T*>(out.raw_data());
  // OpenBLAS threads each GEMM itself.
  for (int64_t i = 0; i < batch; ++i) {
    gemm(CblasRowMajor, ga.trans, gb.trans, m, n, k, T(1), pa + i * a.stride(0), ga.ld, pb + i * b.stride(0), gb.ld,
         T(0), po + i * m * n, n);
  }
}

}  // namespace

void CpuBackend::matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  switch (out.dtype()) {
    case DType::kF32:
      batched_gemm<float>(a, b, out, cblas_sgemm);
      return;
    case DType::kF64:
      batched_gemm<double>(a, b, out, cblas_dgemm);
      return;
    case DType::kF16:
    case DType::kBF16: {
      // f32 GEMM, rounded once on store (the CPU has no half kernels).
      const Tensor a32 = Tensor::allocate(a.shape(), DType::kF32, a.device());
      const Tensor b32 = Tensor::allocate(b.shape(), DType::kF32, b.device());
      const Tensor out32 = Tensor::allocate(out.shape(), DType::kF32, out.device());
      copy(a, a32);
      copy(b, b32);
      batched_gemm<float>(a32, b32, out32, cblas_sgemm);
      copy(out32, out);
      return;
    }
    default:
      no_kernel("cpu", "matmul", out.dtype());
  }
}

}  // namespace ts::cpu
