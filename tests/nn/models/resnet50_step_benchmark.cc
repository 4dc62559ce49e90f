// One ImageNet ResNet-50 training step (forward, cross-entropy, backward,
// SGD with Nesterov momentum and weight decay) on synthetic 224x224 images:
// the images/s figure against PyTorch's (tools/golden/resnet50_torch.py
// step-time, the same model and step; tools/gpu_test resnet50 runs both).
// --dtype=f16|bf16 is the trainer's mixed precision (apex O2: the model but
// batch norm in that dtype, f32 master weights, dynamic loss scaling with
// PyTorch GradScaler's settings), the peer PyTorch's autocast + GradScaler.
// --channels_last lays the images out channels-last, so every convolution,
// batch norm, pooling and elementwise op runs in that layout (the trainer's
// --channels_last; the peer's --channels-last).
//
//   resnet50_step_benchmark [--device=cuda] [--batch=256] [--tf32]
//                           [--dtype=f32|f16|bf16] [--channels_last]
//                           [--steps=30] [--warmup=5] [benchmark flags]
//
// Each step ends when its loss is on the host, so a step's time is its
// completion, not its enqueueing. Counters: median_step_s, images_per_s
// (batch / median step), peak_memory_gib (the caching allocator's peak of
// allocated bytes over the timed run, on CUDA), skipped_steps. Under
// tools/kernel_profile (TS_KERNEL_TRACE set) each timed step on CUDA is a
// profiler window.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "autograd/variable.h"
#include "base/error.h"
#include "nn/losses.h"
#include "nn/models/resnet.h"
#include "optim/sgd.h"
#include "tasks/common/precision.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/profiler.h"
#include "tensor/device.h"
#include "tensor/ops.h"

namespace ts::nn::models {
namespace {

struct Settings {
  Device device = Device::cpu();
  int64_t batch = 256;
  tasks::Precision precision;  // --dtype, --tf32, --channels_last
  int steps = 30;
  int warmup = 5;
  bool traced = false;  // on CUDA under tools/kernel_profile (TS_KERNEL_TRACE set)
};

[[noreturn]] void die(const absl::Status& status) {
  std::fprintf(stderr, "resnet50_step_benchmark: %s\n", status.ToString().c_str());
  std::exit(1);
}

struct Timed {
  std::vector<double> step_seconds;
  int64_t peak_bytes = 0;  // on CUDA
  int64_t skipped_steps = 0;
};

// The PyTorch peer's recipe (torch.optim.SGD with these arguments), under
// mixed precision on f32 master weights as the trainer runs it.
Timed time_steps(const Settings& s) {
  const std::shared_ptr<ResNet> model = resnet50();
  model->to(s.device);
  model->train();
  tasks::PrecisionStep precision(model, s.precision);
  optim::SgdOptions options;
  options.lr = 0.1;
  options.momentum = 0.9;
  options.nesterov = true;
  options.weight_decay = 1e-4;
  optim::Sgd sgd(precision.optimized(), options);
  const Tensor images = precision.input(randn({s.batch, 3, 224, 224}, {DType::kF32, s.device}));
  // Spread over the 1000 classes (a uniform draw cast to an integer could
  // round up to 1000).
  std::vector<int64_t> classes(s.batch);
  for (int64_t i = 0; i < s.batch; ++i) classes[i] = (i * 7919) % 1000;
  const Tensor labels = to(from_vector<int64_t>(classes, {s.batch}), s.device);
  Timed timed;
  for (int i = 0; i < s.warmup + s.steps; ++i) {
    if (i == s.warmup && s.device.is_cuda()) cuda::caching_allocator(s.device.index).reset_peak_stats();
    // Under tools/kernel_profile a timed step is a profiler window, closed
    // after the loss reached the host.
    std::optional<cuda::ProfiledRegion> window;
    if (i >= s.warmup && s.traced) window.emplace();
    const auto start = std::chrono::steady_clock::now();
    sgd.zero_grad();
    const autograd::Variable loss = cross_entropy(model->forward(autograd::Variable(images)), labels);
    precision.backward(loss);
    if (value_or_throw(precision.unscale(i + 1))) {
      sgd.step();
      precision.after_step();
    }
    const Tensor loss_on_host = to(loss.data(), Device::cpu());
    benchmark::DoNotOptimize(loss_on_host.raw_data());
    if (i >= s.warmup) {
      timed.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  if (s.device.is_cuda()) timed.peak_bytes = cuda::caching_allocator(s.device.index).stats().peak_allocated_bytes;
  timed.skipped_steps = precision.skipped_steps();
  return timed;
}

void BM_ResNet50TrainStep(benchmark::State& state, Settings settings) {
  Timed timed;
  for (auto _ : state) {
    absl::StatusOr<Timed> run = capture([&] { return time_steps(settings); });
    if (!run.ok()) die(run.status());
    timed = *std::move(run);
    state.SetIterationTime(std::accumulate(timed.step_seconds.begin(), timed.step_seconds.end(), 0.0));
  }
  std::vector<double>& times = timed.step_seconds;
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  state.counters["median_step_s"] = median;
  state.counters["min_step_s"] = times.front();
  state.counters["images_per_s"] = settings.batch / median;
  state.counters["batch"] = static_cast<double>(settings.batch);
  state.counters["tf32"] = settings.precision.tf32 ? 1 : 0;
  state.counters["channels_last"] = settings.precision.channels_last ? 1 : 0;
  state.counters["peak_memory_gib"] = static_cast<double>(timed.peak_bytes) / (1 << 30);
  state.counters["skipped_steps"] = static_cast<double>(timed.skipped_steps);
}

// Takes our flags out of argv, leaving Google Benchmark's.
Settings parse_settings(int& argc, char** argv) {
  Settings s;
  std::string device = "auto";
  std::string dtype = "f32";
  bool tf32 = false, channels_last = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    bool ok = true;
    if (absl::StartsWith(arg, "--device=")) {
      device = std::string(arg.substr(9));
    } else if (absl::StartsWith(arg, "--batch=")) {
      ok = absl::SimpleAtoi(arg.substr(8), &s.batch) && s.batch > 0;
    } else if (absl::StartsWith(arg, "--steps=")) {
      ok = absl::SimpleAtoi(arg.substr(8), &s.steps) && s.steps > 0;
    } else if (absl::StartsWith(arg, "--warmup=")) {
      ok = absl::SimpleAtoi(arg.substr(9), &s.warmup) && s.warmup >= 0;
    } else if (arg == "--tf32") {
      tf32 = true;
    } else if (arg == "--channels_last") {
      channels_last = true;
    } else if (absl::StartsWith(arg, "--dtype=")) {
      dtype = std::string(arg.substr(8));
    } else {
      argv[kept++] = argv[i];
      continue;
    }
    if (!ok) die(absl::InvalidArgumentError(absl::StrCat("bad value in ", arg)));
  }
  argc = kept;
  absl::StatusOr<tasks::Precision> precision = tasks::Precision::parse(dtype, tf32, channels_last);
  if (!precision.ok()) die(precision.status());
  s.precision = *precision;
  if (device == "auto") device = cuda::is_available() ? "cuda" : "cpu";
  absl::StatusOr<Device> parsed = parse_device(device);
  if (!parsed.ok()) die(parsed.status());
  s.device = *parsed;
  s.traced = s.device.is_cuda() && std::getenv("TS_KERNEL_TRACE") != nullptr;
  return s;
}

}  // namespace
}  // namespace ts::nn::models

int main(int argc, char** argv) {
  using namespace ts::nn::models;
  const Settings settings = parse_settings(argc, argv);
  const std::string name = absl::StrCat("ResNet50TrainStep/", settings.device.to_string(), "/",
                                        settings.precision.label(), "/batch:", settings.batch);
  benchmark::RegisterBenchmark(name.c_str(), BM_ResNet50TrainStep, settings)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
