// One LSTM layer forward + backward (input, state and weight gradients) on
// the CPU at AWD-LSTM's first-layer size (input 400, hidden 1150, bptt 70)
// for a batch of 20 and of 80 (MLBench's per-worker batch), in tokens/s,
// on each path f32 can take: oneDNN's LSTM primitives (the default) and our
// reference kernels (TS_CPU_REFERENCE=1). `tools/golden/lstm_torch.py
// step-time` times PyTorch's peer.
#include <benchmark/benchmark.h>

#include "autograd/ops.h"
#include "nn/functional/cpu_reference_path.h"
#include "nn/lstm.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

constexpr int64_t kSteps = 70, kInput = 400, kHidden = 1150;

// Args: batch, reference path (0 or 1).
void BM_LstmForwardBackward(benchmark::State& state) {
  const int64_t batch = state.range(0);
  functional::set_cpu_reference_path(state.range(1) != 0);
  LSTM lstm(kInput, kHidden);
  const autograd::Variable x(randn({kSteps, batch, kInput}), true);
  for (auto _ : state) {
    const LstmOutput out = lstm.forward(x);
    autograd::sum(out.output).backward();
    benchmark::DoNotOptimize(x.grad().raw_data());
    x.clear_grad();
    lstm.zero_grad();
  }
  functional::set_cpu_reference_path(false);
  state.SetLabel(state.range(1) != 0 ? "reference" : "onednn");
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(kSteps * batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LstmForwardBackward)
    ->ArgsProduct({{20, 80}, {0, 1}})
    ->ArgNames({"batch", "reference"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace ts::nn

BENCHMARK_MAIN();
