// Microbenchmarks of the tensor ops, each timed in alternation with the
// ceiling that bounds it, in one benchmark:
//   matmul f32 (CPU)          vs cblas_sgemm on the same matrices
//   add / sum (CPU)           vs memcpy of the same number of floats
//   matmul f32/f16/bf16 (GPU) vs cublasGemmEx on the same matrices
//   add / sum (GPU)           vs cudaMemcpy device to device
// A pair's time is ours; its counters are the peer's time per call (peer_ms)
// and `ratio`, our time over the peer's (1 = as fast as the peer): a figure
// that machine noise and the VM's CPU of the day move far less than either
// time, which `tools/microbench ratios` checks against a baseline.
// GPU benchmarks report "no CUDA device" and skip on machines without one.
// CPU figures use wall time (the kernels and OpenBLAS are multithreaded);
// `ratios` runs them on one thread (OMP_NUM_THREADS=1, for our loops, OpenBLAS
// and oneDNN alike), where a busy neighbour core does not decide them.
// Run: bazel run //tests/tensor:ops_benchmark -- --benchmark_filter=...
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"
#include "tests/paired_benchmark.h"

namespace ts {
namespace {

using testing::HostClock;
using testing::time_pair;

void report_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- CPU: ours is the op as users call it (it allocates its output); the
// peer is the library call alone, into a buffer allocated once.

void BM_CpuMatmulVsSgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n, n}), b = rand({n, n});
  Tensor c = empty({n, n});
  time_pair(
      state, HostClock(), [&] { benchmark::DoNotOptimize(matmul(a, b)); },
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n,
                    0.0f, c.data<float>(), n);
      });
  report_flops(state, 2.0 * n * n * n);
}

// The machine's copy bandwidth over the same number of floats: the yardstick
// of the memory-bound ops. memcpy moves 8 bytes per float, add 12 and sum 4,
// so a ratio near 1.5 (add) or 0.5 (sum) is at the memory's speed. The copy
// reads a buffer of its own: copying the op's input would find it in the
// cache the op just filled (the VM's L3 holds hundreds of MiB).
template <typename Op>
void time_against_memcpy(benchmark::State& state, int64_t n, Op op) {
  const Tensor src = rand({n});
  Tensor dst = zeros({n});
  time_pair(state, HostClock(), op, [&] {
    std::memcpy(dst.raw_data(), src.raw_data(), n * sizeof(float));
    benchmark::ClobberMemory();
  });
}

void BM_CpuAddVsMemcpy(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n}), b = rand({n});
  time_against_memcpy(state, n, [&] { benchmark::DoNotOptimize(add(a, b)); });
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);  // two reads, one write
}

void BM_CpuSumVsMemcpy(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n});
  time_against_memcpy(state, n, [&] { benchmark::DoNotOptimize(sum(a)); });
  state.SetBytesProcessed(state.iterations() * n * 4);
}

// 16-bit floats on the CPU, which computes them in f32: converting f32 to
// f16, and an f16 and a bf16 op (relu), each against copying the f32 bytes.
// A path that lost its vectorized conversions or its f32 blocks shows as a
// ratio several times larger (it was about 15x slower before them; relu 3x
// slower with blocks that were not vectorized in one function).
void BM_CpuF16ConvertVsMemcpy(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n});
  time_against_memcpy(state, n, [&] { benchmark::DoNotOptimize(to(a, DType::kF16)); });
  state.SetBytesProcessed(state.iterations() * n * 6);  // 4 read, 2 written
}

void relu_against_memcpy(benchmark::State& state, DType dtype) {
  const int64_t n = state.range(0);
  const Tensor a = to(rand({n}) - 0.5, dtype);
  time_against_memcpy(state, n, [&] { benchmark::DoNotOptimize(relu(a)); });
  state.SetBytesProcessed(state.iterations() * n * 4);  // 2 read, 2 written
}

void BM_CpuF16ReluVsMemcpy(benchmark::State& state) { relu_against_memcpy(state, DType::kF16); }
void BM_CpuBf16ReluVsMemcpy(benchmark::State& state) { relu_against_memcpy(state, DType::kBF16); }

BENCHMARK(BM_CpuMatmulVsSgemm)->RangeMultiplier(2)->Range(256, 4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuF16ConvertVsMemcpy)->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuF16ReluVsMemcpy)->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuBf16ReluVsMemcpy)->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuAddVsMemcpy)
    ->RangeMultiplier(4)
    ->Range(1 << 20, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuSumVsMemcpy)
    ->RangeMultiplier(4)
    ->Range(1 << 20, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// ---- CUDA: each side timed with events around its work on the default
// stream, one synchronize per call.

bool skip_without_gpu(benchmark::State& state) {
  if (cuda::is_available()) return false;
  state.SkipWithError(("no CUDA device: " + cuda::unavailable_reason()).c_str());
  return true;
}

// Created once: event creation is not free and the clock runs many times.
class GpuClock {
 public:
  GpuClock() {
    CHECK_CUDA(cudaEventCreate(&start_));
    CHECK_CUDA(cudaEventCreate(&stop_));
  }
  ~GpuClock() {
    CHECK_CUDA(cudaEventDestroy(start_));
    CHECK_CUDA(cudaEventDestroy(stop_));
  }
  GpuClock(const GpuClock&) = delete;
  GpuClock& operator=(const GpuClock&) = delete;

  template <typename Fn>
  double operator()(Fn fn) const {
    CHECK_CUDA(cudaEventRecord(start_, nullptr));
    fn();
    CHECK_CUDA(cudaEventRecord(stop_, nullptr));
    CHECK_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_, stop_;
};

const DType kGemmTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

cudaDataType cuda_type(DType d) { return d == DType::kF16 ? CUDA_R_16F : d == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F; }

void BM_CudaMatmulVsCublas(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const DType dtype = kGemmTypes[state.range(1)];
  const TensorOptions on_gpu{dtype, Device::cuda(0)};
  const Tensor a = rand({n, n}, on_gpu), b = rand({n, n}, on_gpu);
  Tensor c = empty({n, n}, on_gpu);
  cublasHandle_t handle;
  CHECK_CUDA(cublasCreate(&handle));
  const float one = 1, zero = 0;
  state.SetLabel(std::string(dtype_name(dtype)));
  // Row-major C = A B is column-major C^T = B^T A^T: B goes first.
  time_pair(
      state, GpuClock(), [&] { benchmark::DoNotOptimize(matmul(a, b)); },
      [&] {
        CHECK_CUDA(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.raw_data(), cuda_type(dtype), n,
                                a.raw_data(), cuda_type(dtype), n, &zero, c.raw_data(), cuda_type(dtype), n,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      });
  CHECK_CUDA(cublasDestroy(handle));
  report_flops(state, 2.0 * n * n * n);
}

// As on the CPU: the device's copy bandwidth over the same number of floats.
template <typename Op>
void time_against_d2d_copy(benchmark::State& state, int64_t n, Op op) {
  const TensorOptions on_gpu{DType::kF32, Device::cuda(0)};
  const Tensor src = rand({n}, on_gpu);
  Tensor dst = empty({n}, on_gpu);
  time_pair(state, GpuClock(), op, [&] {
    CHECK_CUDA(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), n * sizeof(float), cudaMemcpyDeviceToDevice, nullptr));
  });
}

void BM_CudaAddVsMemcpy(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const TensorOptions on_gpu{DType::kF32, Device::cuda(0)};
  const Tensor a = rand({n}, on_gpu), b = rand({n}, on_gpu);
  time_against_d2d_copy(state, n, [&] { benchmark::DoNotOptimize(add(a, b)); });
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);
}

void BM_CudaSumVsMemcpy(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const Tensor a = rand({n}, {DType::kF32, Device::cuda(0)});
  time_against_d2d_copy(state, n, [&] { benchmark::DoNotOptimize(sum(a)); });
  state.SetBytesProcessed(state.iterations() * n * 4);
}

BENCHMARK(BM_CudaMatmulVsCublas)
    ->ArgsProduct({{256, 512, 1024, 2048, 4096}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaAddVsMemcpy)
    ->RangeMultiplier(4)
    ->Range(1 << 20, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaSumVsMemcpy)
    ->RangeMultiplier(4)
    ->Range(1 << 20, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ts

BENCHMARK_MAIN();
