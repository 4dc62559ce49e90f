// Batched matrix products through cuBLASLt: tensor cores for f16 and bf16
// (f32 accumulation) and for f32 when TF32 is allowed, plain f32 and f64
// arithmetic otherwise. cuBLASLt is column-major, and a row-major matrix
// read column-major is its transpose, so the row-major out = a @ b is
// computed as the column-major out^T = b^T a^T with no copies: each operand
// is handed over as stored, transposed or not.
//
// Each distinct problem (types, shapes, strides, pointer alignments) gets its
// descriptors and cuBLASLt's first heuristic choice once per thread and
// device; later calls reuse them, with the algorithm's workspace taken from
// the caching allocator on the current stream. Split-K partial sums of
// 16-bit products are reduced in f32, never in the output type, on both
// libraries. Which library runs a product is cuda_gemm_library()'s choice
// (TS_CUBLASLT): by default cuBLAS's cublasGemmStridedBatchedEx takes what
// cuBLASLt has no algorithm for or refuses at run time, as PyTorch falls
// back, so that a path never run on some GPU cannot stop a training run.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/cuda_gemm.h"
#include "tensor/precision.h"

namespace ts::cuda {
namespace {

// An owned cuBLAS(Lt) object, destroyed with `Destroy`. Errors on destroy are
// ignored: at process exit the CUDA context may already be gone.
template <typename T, cublasStatus_t (*Destroy)(T)>
struct Deleter {
  void operator()(T object) const { Destroy(object); }
};
template <typename T, cublasStatus_t (*Destroy)(T)>
using Owned = std::unique_ptr<std::remove_pointer_t<T>, Deleter<T, Destroy>>;
using MatmulDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

template <typename Desc, typename Attribute, typename T>
void set_attribute(cublasStatus_t (*setter)(Desc, Attribute, const void*, size_t), Desc desc, Attribute attribute,
                   T value) {
  TS_CUDA_CHECK(setter(desc, attribute, &value, sizeof(value)));
}

// How cuBLAS reads a row-major [rows, cols] matrix with these strides (one
// of them 1 and the other at least the extent it spans, as the frontend
// guarantees) as a factor of the transposed product. With unit column
// stride its memory is, column-major, the transpose that the product wants:
// no op, a column-major [cols, rows] matrix with leading dimension the row
// stride. With unit row stride its memory is the matrix itself,
// column-major [rows, cols], to be transposed.
struct GemmOperand {
  cublasOperation_t op;
  int64_t stored_rows, stored_cols, ld;
};

GemmOperand gemm_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  GemmOperand g = col_stride == 1 && row_stride >= std::max<int64_t>(cols, 1)
                      ? GemmOperand{CUBLAS_OP_N, cols, rows, row_stride}
                      : GemmOperand{CUBLAS_OP_T, rows, cols, col_stride};
  // A single stored column's stride is arbitrary: the smallest valid one
  // keeps it from splitting the plans or ruling out aligned algorithms.
  if (g.stored_cols == 1) g.ld = std::max<int64_t>(g.stored_rows, 1);
  return g;
}

// The largest power of two, up to 256 (cuBLASLt's default requirement),
// dividing the address: algorithms needing more are ruled out.
uint32_t alignment_of(const void* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  return static_cast<uint32_t>(std::min<uintptr_t>(address & (~address + 1), 256));
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;  // of alpha and beta
  bool is_16_bit() const { return data == CUDA_R_16F || data == CUDA_R_16BF; }
};

Types types_for(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return {CUDA_R_32F, allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kF16:  // tensor cores, f32 accumulation
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kBF16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kF64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    default:
      no_kernel("cuda", "matmul", dtype);
  }
}

// Everything the descriptors and the heuristic's choice depend on.
struct Problem {
  Types types;
  GemmOperand a, b;  // ours; cuBLAS's A is our b and its B our a
  int64_t m, n, k, batch, a_batch_stride, b_batch_stride;
  uint32_t a_alignment, b_alignment, out_alignment;

  auto tie() const {
    return std::make_tuple(types.data, types.compute, a.op, a.ld, b.op, b.ld, m, n, k, batch, a_batch_stride,
                           b_batch_stride, a_alignment, b_alignment, out_alignment);
  }
  bool operator==(const Problem& other) const { return tie() == other.tie(); }
  template <typename H>
  friend H AbslHashValue(H h, const Problem& p) {
    return H::combine(std::move(h), p.tie());
  }
  std::string describe() const {
    return absl::StrCat("a batch of ", batch, " [", m, ", ", k, "] @ [", k, ", ", n, "] products");
  }
};

MatrixLayout matrix_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                           int64_t batch_stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  TS_CUDA_CHECK(
      cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  MatrixLayout owned(layout);
  set_attribute(cublasLtMatrixLayoutSetAttribute, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                static_cast<int32_t>(batch));
  set_attribute(cublasLtMatrixLayoutSetAttribute, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
  return owned;
}

// A problem's cuBLASLt descriptors and the algorithm chosen for it; without
// a descriptor (no algorithm, or refused), cuBLAS runs the problem.
struct Plan {
  MatmulDesc desc;
  MatrixLayout lt_a, lt_b, out;  // cuBLASLt's A (our b) and B (our a); C = D
  cublasLtMatmulAlgo_t algorithm{};
  size_t workspace_bytes = 0;
  bool uses_lt() const { return desc != nullptr; }
};

// cuBLAS's recommended workspace: 32 MiB on Hopper and later, 4 MiB before.
size_t max_workspace_bytes(int device) {
  return value_or_throw(device_properties(device)).major >= 9 ? (32u << 20) : (4u << 20);
}

// A refusal (not supported, an invalid value), at planning or at run time,
// is cuBLAS's turn unless the setting is strict; other failures are errors.
bool refused(cublasStatus_t status) {
  return status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE;
}

void check_lt_call(cublasStatus_t status, const char* call, const Problem& p) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  TS_CHECK(refused(status) && cuda_gemm_library() != CudaGemmLibrary::kCublasLtStrict, "cuda matmul: ", call,
           " failed on ", p.describe(), ": ", describe_error(status));
  std::fprintf(stderr, "cuda matmul: %s refused %s (%s); it goes through cuBLAS\n", call, p.describe().c_str(),
               describe_error(status).c_str());
}

Plan make_plan(cublasLtHandle_t handle, const Problem& p, size_t max_workspace) {
  // cuBLASLt counts the batch in an int32: past that it cannot run the
  // product (an error when strict, as any other it cannot run).
  if (p.batch > INT_MAX) {
    check_lt_call(CUBLAS_STATUS_NOT_SUPPORTED, "cuBLASLt (a batch past int32)", p);
    return {};
  }
  Plan plan;
  cublasLtMatmulDesc_t desc = nullptr;
  TS_CUDA_CHECK(cublasLtMatmulDescCreate(&desc, p.types.compute, p.types.scale));
  plan.desc.reset(desc);
  set_attribute(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(p.b.op));
  set_attribute(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(p.a.op));
  plan.lt_a = matrix_layout(p.types.data, p.b.stored_rows, p.b.stored_cols, p.b.ld, p.batch, p.b_batch_stride);
  plan.lt_b = matrix_layout(p.types.data, p.a.stored_rows, p.a.stored_cols, p.a.ld, p.batch, p.a_batch_stride);
  plan.out = matrix_layout(p.types.data, p.n, p.m, p.n, p.batch, p.m * p.n);

  cublasLtMatmulPreference_t preference = nullptr;
  TS_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const Preference owned_preference(preference);
  set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                static_cast<uint64_t>(max_workspace));
  if (p.types.is_16_bit()) {
    set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                  static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
  }
  set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                p.b_alignment);
  set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                p.a_alignment);
  set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                p.out_alignment);
  set_attribute(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                p.out_alignment);
  cublasLtMatmulHeuristicResult_t best{};
  int returned = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle, desc, plan.lt_a.get(), plan.lt_b.get(), plan.out.get(),
                                                         plan.out.get(), preference, 1, &best, &returned);
  if (status == CUBLAS_STATUS_SUCCESS && returned == 0) status = CUBLAS_STATUS_NOT_SUPPORTED;
  if (status == CUBLAS_STATUS_SUCCESS) status = best.state;
  check_lt_call(status, "cublasLtMatmulAlgoGetHeuristic", p);
  if (status != CUBLAS_STATUS_SUCCESS) return {};
  plan.algorithm = best.algo;
  plan.workspace_bytes = best.workspaceSize;
  return plan;
}

// The calling thread's handles and plans for one device (a handle must not
// be used by two threads at once), each created when first needed and
// destroyed when the thread exits.
class GemmContext {
 public:
  explicit GemmContext(int device) : max_workspace_(max_workspace_bytes(device)) {}

  cublasLtHandle_t lt_handle() {
    if (lt_handle_ == nullptr) {
      cublasLtHandle_t handle = nullptr;
      TS_CUDA_CHECK(cublasLtCreate(&handle));
      lt_handle_.reset(handle);
    }
    return lt_handle_.get();
  }

  cublasHandle_t cublas_handle() {
    if (cublas_handle_ == nullptr) {
      cublasHandle_t handle = nullptr;
      TS_CUDA_CHECK(cublasCreate(&handle));
      cublas_handle_.reset(handle);
      // As the preference does for cuBLASLt: split-K sums of 16-bit products
      // stay in f32.
      TS_CUDA_CHECK(cublasSetMathMode(handle, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    }
    return cublas_handle_.get();
  }

  Plan& plan(const Problem& problem) {
    if (auto it = plans_.find(problem); it != plans_.end()) return *it->second;
    // Shapes that keep changing (sequence lengths) must not grow this
    // without bound; a miss costs one heuristic query.
    if (plans_.size() >= kMaxPlans) plans_.clear();
    auto plan = std::make_unique<Plan>(make_plan(lt_handle(), problem, max_workspace_));
    return *plans_.emplace(problem, std::move(plan)).first->second;
  }

 private:
  static constexpr size_t kMaxPlans = 4096;
  size_t max_workspace_;
  Owned<cublasLtHandle_t, cublasLtDestroy> lt_handle_;
  Owned<cublasHandle_t, cublasDestroy> cublas_handle_;
  absl::flat_hash_map<Problem, std::unique_ptr<Plan>> plans_;
};

GemmContext& gemm_context(int device) {
  thread_local absl::flat_hash_map<int, std::unique_ptr<GemmContext>> contexts;
  std::unique_ptr<GemmContext>& context = contexts[device];
  if (context == nullptr) context = std::make_unique<GemmContext>(device);
  return *context;
}

// The same product through cuBLAS (64-bit sizes, so nothing is out of range).
void cublas_matmul(cublasHandle_t handle, cudaStream_t stream, const Problem& p, const void* alpha, const void* beta,
                   const void* a, const void* b, void* out) {
  TS_CUDA_CHECK(cublasSetStream(handle, stream));
  TS_CUDA_CHECK(cublasGemmStridedBatchedEx_64(
      handle, p.b.op, p.a.op, p.n, p.m, p.k, alpha, b, p.types.data, p.b.ld, p.b_batch_stride, a, p.types.data, p.a.ld,
      p.a_batch_stride, beta, out, p.types.data, p.n, p.m * p.n, p.batch, p.types.compute, CUBLAS_GEMM_DEFAULT));
  count_cuda_gemm(CudaGemmLibrary::kCublas);
}

}  // namespace

void CudaBackend::matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  // The batch stride of a batch of one is arbitrary: 0 keeps the plans apart
  // only by what matters.
  const Problem problem{types_for(out.dtype()),
                        gemm_operand(m, k, a.stride(1), a.stride(2)),
                        gemm_operand(k, n, b.stride(1), b.stride(2)),
                        m,
                        n,
                        k,
                        batch,
                        batch > 1 ? a.stride(0) : 0,
                        batch > 1 ? b.stride(0) : 0,
                        alignment_of(a.raw_data()),
                        alignment_of(b.raw_data()),
                        alignment_of(out.raw_data())};
  const int device = out.device().index;
  DeviceGuard guard(device);
  GemmContext& context = gemm_context(device);
  const cudaStream_t stream = current_stream(device);
  // alpha and beta come in the scale type.
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const bool f64 = problem.types.scale == CUDA_R_64F;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const auto through_cublas = [&] {
    cublas_matmul(context.cublas_handle(), stream, problem, alpha, beta, a.raw_data(), b.raw_data(), out.raw_data());
  };
  if (cuda_gemm_library() == CudaGemmLibrary::kCublas) return through_cublas();
  Plan& plan = context.plan(problem);
  if (!plan.uses_lt()) return through_cublas();
  CachingAllocator& allocator = caching_allocator(device);
  void* workspace = value_or_throw(allocator.allocate(plan.workspace_bytes, stream));
  const cublasStatus_t status =
      cublasLtMatmul(context.lt_handle(), plan.desc.get(), alpha, b.raw_data(), plan.lt_a.get(), a.raw_data(),
                     plan.lt_b.get(), beta, out.raw_data(), plan.out.get(), out.raw_data(), plan.out.get(),
                     &plan.algorithm, workspace, plan.workspace_bytes, stream);
  // Stream-ordered: the next user of the workspace on this stream runs after
  // the product.
  if (workspace != nullptr) allocator.deallocate(workspace);
  check_lt_call(status, "cublasLtMatmul", problem);
  if (status == CUBLAS_STATUS_SUCCESS) {
    count_cuda_gemm(CudaGemmLibrary::kCublasLt);
    return;
  }
  plan = Plan{};  // this problem's later calls go straight to cuBLAS
  through_cublas();
}

}  // namespace ts::cuda
