// The loader's throughput to host memory and its resident memory over whole
// epochs: Fashion-MNIST's train split (or, where the dataset-fashion-mnist
// package is missing, a synthetic set of the same shapes), batch 128,
// random crop (padding 4) + horizontal flip + normalize, as ResNet-20
// trains. Target on a 2-core machine: >= 20,000 images/s with 2 workers.
//   bazel run //tests/data/loader:loader_benchmark
#include <algorithm>
#include <cstdio>
#include <memory>

#include "benchmark/benchmark.h"
#include "data/loader/io_mode.h"
#include "data/loader/loader.h"
#include "data/readers/idx.h"
#include "data/synthetic/images.h"
#include "data/transforms/image.h"

namespace ts::data {
namespace {

// Opened once: reading and inflating the IDX files is not what is measured.
const std::shared_ptr<const Dataset>& fashion_mnist_or_synthetic() {
  static const std::shared_ptr<const Dataset>* set = [] {
    absl::StatusOr<std::unique_ptr<IdxImageDataset>> real = open_mnist(kFashionMnistDir, /*train=*/true);
    if (real.ok()) return new std::shared_ptr<const Dataset>(std::move(*real));
    std::fprintf(stderr, "loader_benchmark: %s; using a synthetic set of the same shapes\n",
                 std::string(real.status().message()).c_str());
    return new std::shared_ptr<const Dataset>(*SyntheticImages::create({}));
  }();
  return *set;
}

// Args: worker threads, prefetch depth. One iteration is one full epoch.
void BM_LoaderEpoch(benchmark::State& state) {
  const std::shared_ptr<const Dataset>& dataset = fashion_mnist_or_synthetic();
  LoaderOptions options{.batch_size = 128,
                        .num_workers = static_cast<int>(state.range(0)),
                        .prefetch_depth = static_cast<int>(state.range(1)),
                        .seed = 1,
                        .transform = compose({transforms::random_crop(28, 28, 4), transforms::random_horizontal_flip(),
                                              transforms::normalize({0.2860f}, {0.3530f})})};
  absl::StatusOr<std::unique_ptr<DataLoader>> loader =
      DataLoader::create(dataset, std::make_unique<ShuffledSampler>(dataset->size(), 1), options);
  if (!loader.ok()) {
    state.SkipWithError(std::string(loader.status().message()).c_str());
    return;
  }
  int64_t epoch = 0, images = 0, rss_growth = 0, rss_peak = 0;
  for (auto _ : state) {
    absl::StatusOr<IoReport> report = run_io_only(**loader, 1, epoch++);
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      return;
    }
    images += report->samples;
    // Growth within an epoch: with a bounded queue it stays near
    // prefetch_depth batches whatever the epoch's length.
    rss_growth = std::max(rss_growth, report->rss_peak_bytes - report->rss_start_bytes);
    rss_peak = std::max(rss_peak, report->rss_peak_bytes);
  }
  constexpr double kMiB = 1 << 20;
  const double batch_mib = 128.0 * 28 * 28 * 4 / kMiB;  // one f32 image batch
  state.counters["images/s"] = benchmark::Counter(static_cast<double>(images), benchmark::Counter::kIsRate);
  state.counters["rss_peak_MiB"] = rss_peak / kMiB;
  state.counters["rss_growth_MiB"] = rss_growth / kMiB;
  state.counters["depth_x_batch_MiB"] = options.prefetch_depth * batch_mib;
  state.counters["pool_cached_MiB"] = (*loader)->memory_stats().cached_bytes / kMiB;
}
BENCHMARK(BM_LoaderEpoch)
    ->ArgNames({"workers", "depth"})
    ->Args({2, 4})
    ->Args({1, 4})
    ->Args({2, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace ts::data

BENCHMARK_MAIN();
