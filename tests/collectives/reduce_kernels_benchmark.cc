// The MPI backend's host reduction loops on one segment of the ring (256 KiB
// of a gradient, the size its transfers land in, so in L2): dst += b, in
// place, and the final scaling of an average, per dtype. The 16-bit floats
// run in f32 lanes where the CPU has AVX2 and F16C; TS_CPU_ISA=baseline times
// the one-element-at-a-time loops instead.
// Run: bazel run //tests/collectives:reduce_kernels_benchmark
#include <vector>

#include "benchmark/benchmark.h"
#include "collectives/mpi/reduce_kernels.h"
#include "tensor/dtype.h"

namespace ts::collectives::mpi {
namespace {

constexpr int64_t kSegmentBytes = 256 << 10;

void BM_ReduceInto(benchmark::State& state, DType dtype) {
  const int64_t n = kSegmentBytes / dtype_size(dtype);
  // Zero bytes are zeros in every dtype: no NaN or subnormal slows a lane.
  std::vector<char> dst(kSegmentBytes), b(kSegmentBytes);
  for (auto _ : state) {
    reduce_into(dst.data(), dst.data(), b.data(), n, dtype, ReduceOp::kSum);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kSegmentBytes);
}

void BM_Scale(benchmark::State& state, DType dtype) {
  const int64_t n = kSegmentBytes / dtype_size(dtype);
  std::vector<char> data(kSegmentBytes);
  for (auto _ : state) {
    scale(data.data(), n, dtype, 0.5);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kSegmentBytes);
}

BENCHMARK_CAPTURE(BM_ReduceInto, f32, DType::kF32);
BENCHMARK_CAPTURE(BM_ReduceInto, f16, DType::kF16);
BENCHMARK_CAPTURE(BM_ReduceInto, bf16, DType::kBF16);
BENCHMARK_CAPTURE(BM_Scale, f32, DType::kF32);
BENCHMARK_CAPTURE(BM_Scale, f16, DType::kF16);
BENCHMARK_CAPTURE(BM_Scale, bf16, DType::kBF16);

}  // namespace
}  // namespace ts::collectives::mpi

BENCHMARK_MAIN();
