// Microbenchmarks of the tensor ops against the ceilings that bound them, in
// one binary so each pair is measured in the same run:
//   matmul f32 (CPU)        vs cblas_sgemm on the same buffers
//   add / sum (CPU)         vs memcpy of the same bytes
//   matmul f32/f16/bf16 (GPU) vs cublasGemmEx on the same buffers
//   add / sum (GPU)         vs cudaMemcpy device to device
// GPU benchmarks report "no CUDA device" and skip on machines without one.
// CPU figures use wall time (the kernels and OpenBLAS are multithreaded).
// Run: bazel run //tests/tensor:ops_benchmark -- --benchmark_filter=...
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstring>

#include "benchmark/benchmark.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts {
namespace {

void report_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- CPU ----

void BM_CpuMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n, n}), b = rand({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
  report_flops(state, 2.0 * n * n * n);
}

void BM_CpuSgemmDirect(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n, n}), b = rand({n, n});
  for (auto _ : state) {
    // Our matmul allocates its output each call; so does this.
    Tensor c = empty({n, n});
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f,
                c.data<float>(), n);
    benchmark::DoNotOptimize(c.raw_data());
  }
  report_flops(state, 2.0 * n * n * n);
}

void BM_CpuAdd(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n}), b = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);  // two reads, one write
}

void BM_CpuSum(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize(sum(a));
  state.SetBytesProcessed(state.iterations() * n * 4);
}

void BM_CpuMemcpy(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n});
  for (auto _ : state) {
    Tensor c = empty({n});
    std::memcpy(c.raw_data(), a.raw_data(), n * 4);
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * n * 4);  // one read, one write
}

// The same copy into a buffer allocated once, bypassing our allocator: the
// machine's steady-state copy bandwidth, the yardstick for BM_CpuAdd.
void BM_CpuMemcpyWarm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = rand({n});
  Tensor c = zeros({n});
  for (auto _ : state) {
    std::memcpy(c.raw_data(), a.raw_data(), n * 4);
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * n * 4);
}

BENCHMARK(BM_CpuMatmul)->RangeMultiplier(2)->Range(256, 4096)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuSgemmDirect)->RangeMultiplier(2)->Range(256, 4096)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuAdd)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuSum)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuMemcpy)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuMemcpyWarm)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- CUDA: timed with events around the work, one synchronize per batch.

bool skip_without_gpu(benchmark::State& state) {
  if (cuda::is_available()) return false;
  state.SkipWithError(("no CUDA device: " + cuda::unavailable_reason()).c_str());
  return true;
}

// Times `iters` calls of fn on the default stream and reports the average.
template <typename Fn>
void time_on_gpu(benchmark::State& state, Fn fn) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  fn();  // warm-up: allocator cache, cuBLAS heuristics
  CHECK_CUDA(cudaDeviceSynchronize());
  for (auto _ : state) {
    CHECK_CUDA(cudaEventRecord(start, nullptr));
    fn();
    CHECK_CUDA(cudaEventRecord(stop, nullptr));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms * 1e-3);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
}

const DType kGemmTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

void BM_CudaMatmul(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const DType dtype = kGemmTypes[state.range(1)];
  const Tensor a = rand({n, n}, {dtype, Device::cuda(0)}), b = rand({n, n}, {dtype, Device::cuda(0)});
  state.SetLabel(std::string(dtype_name(dtype)));
  time_on_gpu(state, [&] { benchmark::DoNotOptimize(matmul(a, b)); });
  report_flops(state, 2.0 * n * n * n);
}

cudaDataType cuda_type(DType d) { return d == DType::kF16 ? CUDA_R_16F : d == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F; }

void BM_CublasDirect(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const DType dtype = kGemmTypes[state.range(1)];
  const Tensor a = rand({n, n}, {dtype, Device::cuda(0)}), b = rand({n, n}, {dtype, Device::cuda(0)});
  Tensor c = empty({n, n}, {dtype, Device::cuda(0)});
  cublasHandle_t handle;
  CHECK_CUDA(cublasCreate(&handle));
  const float one = 1, zero = 0;
  state.SetLabel(std::string(dtype_name(dtype)));
  time_on_gpu(state, [&] {
    CHECK_CUDA(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.raw_data(), cuda_type(dtype), n,
                            a.raw_data(), cuda_type(dtype), n, &zero, c.raw_data(), cuda_type(dtype), n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  CHECK_CUDA(cublasDestroy(handle));
  report_flops(state, 2.0 * n * n * n);
}

void BM_CudaAdd(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const Tensor a = rand({n}, {DType::kF32, Device::cuda(0)}), b = rand({n}, {DType::kF32, Device::cuda(0)});
  time_on_gpu(state, [&] { benchmark::DoNotOptimize(add(a, b)); });
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);
}

void BM_CudaSum(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const Tensor a = rand({n}, {DType::kF32, Device::cuda(0)});
  time_on_gpu(state, [&] { benchmark::DoNotOptimize(sum(a)); });
  state.SetBytesProcessed(state.iterations() * n * 4);
}

void BM_CudaMemcpyD2D(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const int64_t n = state.range(0);
  const Tensor a = rand({n}, {DType::kF32, Device::cuda(0)});
  Tensor c = empty({n}, {DType::kF32, Device::cuda(0)});
  time_on_gpu(state, [&] {
    CHECK_CUDA(cudaMemcpyAsync(c.raw_data(), a.raw_data(), n * 4, cudaMemcpyDeviceToDevice, nullptr));
  });
  state.SetBytesProcessed(state.iterations() * 2 * n * 4);
}

BENCHMARK(BM_CudaMatmul)
    ->ArgsProduct({{256, 512, 1024, 2048, 4096}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CublasDirect)
    ->ArgsProduct({{256, 512, 1024, 2048, 4096}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaAdd)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaSum)->RangeMultiplier(4)->Range(1 << 20, 64 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CudaMemcpyD2D)
    ->RangeMultiplier(4)
    ->Range(1 << 20, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ts

BENCHMARK_MAIN();
