// batch_norm in training mode, forward + backward (input, weight and bias
// gradients), on the CPU for the three shapes of ResNet-20 on CIFAR (batch
// 128), row-major and channels-last, in GB/s of the tensors the fused
// kernels must touch: x and y forward; x, dy and dx backward.
#include <benchmark/benchmark.h>

#include "absl/strings/str_cat.h"
#include "autograd/variable.h"
#include "nn/functional.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

struct BatchNormShape {
  const char* name;
  int64_t channels, size;
};

constexpr int64_t kBatch = 128;
const BatchNormShape kShapes[] = {{"16x32x32", 16, 32}, {"32x16x16", 32, 16}, {"64x8x8", 64, 8}};

void BM_BatchNormForwardBackward(benchmark::State& state) {
  const BatchNormShape& s = kShapes[state.range(0)];
  const MemoryFormat format = state.range(1) ? MemoryFormat::kChannelsLast : MemoryFormat::kContiguous;
  const autograd::Variable x(randn({kBatch, s.channels, s.size, s.size}, {DType::kF32, Device::cpu(), format}), true);
  const autograd::Variable w(ones({s.channels}), true);
  const autograd::Variable b(zeros({s.channels}), true);
  const Tensor running_mean = zeros({s.channels});
  const Tensor running_var = ones({s.channels});
  const Tensor grad_out = randn(x.shape(), {DType::kF32, Device::cpu(), format});
  for (auto _ : state) {
    const autograd::Variable y = batch_norm(x, running_mean, running_var, w, b, true, 0.1, 1e-5);
    y.backward(grad_out);
    benchmark::DoNotOptimize(x.grad().raw_data());
    x.clear_grad();
    w.clear_grad();
    b.clear_grad();
  }
  state.SetLabel(absl::StrCat(s.name, " ", memory_format_name(format)));
  const double bytes = 5.0 * x.data().numel() * sizeof(float);
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BatchNormForwardBackward)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"shape", "channels_last"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace ts::nn::functional

BENCHMARK_MAIN();
