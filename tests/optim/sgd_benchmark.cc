// SGD step over real model parameter sets, reporting the bytes the update
// must move (read p, g and the momentum buffer; write p and the buffer):
//   CPU: ResNet-20 (0.27M parameters), plain SGD and the MLBench recipe
//        (momentum 0.9, Nesterov, weight decay 1e-4)
//   CUDA: ResNet-20 and ResNet-50 (25.6M), one fused launch vs one launch per
//        tensor (same kernel), timed with events around each step
// CUDA benchmarks report "no CUDA device" and skip on machines without one.
// Run: bazel run //tests/optim:sgd_benchmark -- --benchmark_filter=...
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "autograd/variable.h"
#include "benchmark/benchmark.h"
#include "optim/sgd.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts::optim {
namespace {

// Parameter shapes of He et al.'s CIFAR ResNet-20 (option A shortcuts: none
// carry parameters): 3 stages of 3 basic blocks at 16, 32, 64 channels.
std::vector<Shape> resnet20_shapes() {
  std::vector<Shape> shapes = {{16, 3, 3, 3}, {16}, {16}};
  int64_t in = 16;
  for (int64_t width : {16, 32, 64}) {
    for (int block = 0; block < 3; ++block) {
      for (int conv = 0; conv < 2; ++conv) {
        shapes.push_back({width, conv == 0 ? in : width, 3, 3});
        shapes.push_back({width});
        shapes.push_back({width});
      }
      in = width;
    }
  }
  shapes.push_back({10, 64});
  shapes.push_back({10});
  return shapes;
}

// torchvision's ResNet-50: bottleneck blocks [3, 4, 6, 3], expansion 4.
std::vector<Shape> resnet50_shapes() {
  std::vector<Shape> shapes = {{64, 3, 7, 7}, {64}, {64}};
  int64_t in = 64;
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = 64 << stage, out = width * 4;
    for (int block = 0; block < blocks[stage]; ++block) {
      const Shape convs[] = {{width, in, 1, 1}, {width, width, 3, 3}, {out, width, 1, 1}};
      for (const Shape& conv : convs) {
        shapes.push_back(conv);
        shapes.push_back({conv[0]});
        shapes.push_back({conv[0]});
      }
      if (block == 0) {
        shapes.push_back({out, in, 1, 1});
        shapes.push_back({out});
        shapes.push_back({out});
      }
      in = out;
    }
  }
  shapes.push_back({1000, 2048});
  shapes.push_back({1000});
  return shapes;
}

const SgdOptions kPlain{.lr = 0.1};
const SgdOptions kRecipe{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4, .nesterov = true};

struct Model {
  std::vector<autograd::Variable> params;
  int64_t numel = 0;
};

Model make_model(const std::vector<Shape>& shapes, Device device) {
  Model m;
  for (const Shape& shape : shapes) {
    autograd::Variable p(randn(shape, {DType::kF32, device}), true);
    p.set_grad(randn(shape, {DType::kF32, device}));
    m.params.push_back(p);
    m.numel += p.numel();
  }
  return m;
}

void report_bytes(benchmark::State& state, const Model& m, const SgdOptions& options) {
  const int64_t streams = options.momentum != 0 ? 5 : 3;  // p, g (, b) in; p (, b) out
  state.SetBytesProcessed(state.iterations() * streams * m.numel * 4);
  state.counters["params"] = static_cast<double>(m.numel);
}

// range(0): 0 plain SGD, 1 the MLBench recipe.
void BM_SgdStepCpuResnet20(benchmark::State& state) {
  const SgdOptions& options = state.range(0) == 0 ? kPlain : kRecipe;
  Model m = make_model(resnet20_shapes(), Device::cpu());
  Sgd sgd(m.params, options);
  sgd.step();  // creates the momentum buffers
  for (auto _ : state) {
    sgd.step();
  }
  state.SetLabel(options.momentum != 0 ? "momentum+nesterov+wd" : "plain");
  report_bytes(state, m, options);
}

// range(0): 0 ResNet-20, 1 ResNet-50; range(1): 1 fused, 0 one launch per tensor.
void BM_SgdStepCuda(benchmark::State& state) {
  if (!cuda::is_available()) {
    state.SkipWithError(("no CUDA device: " + cuda::unavailable_reason()).c_str());
    return;
  }
  Model m = make_model(state.range(0) == 0 ? resnet20_shapes() : resnet50_shapes(), Device::cuda(0));
  Sgd sgd(m.params, kRecipe);
  sgd.set_fused(state.range(1) == 1);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  sgd.step();  // buffers, allocator cache
  CHECK_CUDA(cudaDeviceSynchronize());
  for (auto _ : state) {
    CHECK_CUDA(cudaEventRecord(start, nullptr));
    sgd.step();
    CHECK_CUDA(cudaEventRecord(stop, nullptr));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms * 1e-3);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  state.SetLabel(std::string(state.range(0) == 0 ? "resnet20" : "resnet50") +
                 (state.range(1) == 1 ? " fused" : " per-tensor"));
  report_bytes(state, m, kRecipe);
}

BENCHMARK(BM_SgdStepCpuResnet20)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SgdStepCuda)->ArgsProduct({{0, 1}, {1, 0}})->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ts::optim

BENCHMARK_MAIN();
