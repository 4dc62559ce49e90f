// conv2d forward + backward (input and weight gradients) on the CPU for the
// convolutions of ResNet-20 on CIFAR (batch 128), reporting GFLOP/s of the
// three products (forward, grad input, grad weight). The ResNet20Stack case
// runs all 19 convolutions of the network once, forward and backward: the
// conv share of one training step. BM_ConvOnednnVsReference times each shape
// on oneDNN (the f32 path) and on the im2col + OpenBLAS reference path in
// alternation: its `ratio` (oneDNN's time / the reference's) is a pair that
// `tools/microbench ratios` checks.
#include <benchmark/benchmark.h>

#include <vector>

#include "autograd/variable.h"
#include "nn/functional.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/ops.h"
#include "tests/paired_benchmark.h"

namespace ts::nn::functional {
namespace {

struct ConvShape {
  const char* name;
  int64_t c_in, c_out, size, stride;
  int count_in_resnet20;  // how many convs of this shape the network has
};

constexpr int64_t kBatch = 128;
const ConvShape kShapes[] = {
    {"stem_3to16_32x32", 3, 16, 32, 1, 1}, {"16to16_32x32", 16, 16, 32, 1, 6},    {"16to32_s2_32x32", 16, 32, 32, 2, 1},
    {"32to32_16x16", 32, 32, 16, 1, 5},    {"32to64_s2_16x16", 32, 64, 16, 2, 1}, {"64to64_8x8", 64, 64, 8, 1, 5},
};

// One convolution's tensors, with the 3x3 padding-1 configuration of ResNet.
struct ConvCase {
  explicit ConvCase(const ConvShape& s)
      : x(randn({kBatch, s.c_in, s.size, s.size}), true),
        w(randn({s.c_out, s.c_in, 3, 3}), true),
        options{{s.stride, s.stride}, {1, 1}} {
    const int64_t out = (s.size + 2 - 3) / s.stride + 1;
    grad_out = randn({kBatch, s.c_out, out, out});
    flops = 3.0 * 2.0 * kBatch * s.c_out * out * out * s.c_in * 9;
  }
  void run() {
    const autograd::Variable y = conv2d(x, w, autograd::Variable(), options);
    y.backward(grad_out);
    benchmark::DoNotOptimize(w.grad().raw_data());
    x.clear_grad();
    w.clear_grad();
  }
  autograd::Variable x, w;
  Conv2dOptions options;
  Tensor grad_out;
  double flops;
};

void BM_ConvForwardBackward(benchmark::State& state) {
  ConvCase c(kShapes[state.range(0)]);
  for (auto _ : state) c.run();
  state.SetLabel(kShapes[state.range(0)].name);
  state.counters["GFLOP/s"] = benchmark::Counter(c.flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ConvForwardBackward)->DenseRange(0, 5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ConvOnednnVsReference(benchmark::State& state) {
  ConvCase c(kShapes[state.range(0)]);
  const auto on_path = [&](bool reference) {
    return [&c, reference] {
      set_cpu_reference_path(reference);
      c.run();
    };
  };
  testing::time_pair(state, testing::HostClock(), on_path(false), on_path(true));
  set_cpu_reference_path(false);
  state.SetLabel(kShapes[state.range(0)].name);
}
BENCHMARK(BM_ConvOnednnVsReference)->DenseRange(0, 5)->Unit(benchmark::kMillisecond)->UseManualTime();

void BM_ResNet20ConvStack(benchmark::State& state) {
  std::vector<ConvCase> cases;
  std::vector<int> counts;
  double flops = 0;
  for (const ConvShape& s : kShapes) {
    cases.emplace_back(s);
    counts.push_back(s.count_in_resnet20);
    flops += cases.back().flops * s.count_in_resnet20;
  }
  for (auto _ : state) {
    for (size_t i = 0; i < cases.size(); ++i) {
      for (int k = 0; k < counts[i]; ++k) cases[i].run();
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ResNet20ConvStack)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ts::nn::functional

BENCHMARK_MAIN();
