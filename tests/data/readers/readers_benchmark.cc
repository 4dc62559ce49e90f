// Reader throughput, one thread: LIBSVM parsing in bytes of text per second
// on generated text shaped like MLBench's epsilon (dense rows of 2000
// features) and like a sparse text set (rcv1: ~75 of 47k features per row);
// and IdxImageDataset::get() in examples per second (the loader's per-sample
// cost before transforms).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include "base/error.h"
#include "base/files.h"
#include "benchmark/benchmark.h"
#include "data/readers/idx.h"
#include "data/readers/libsvm.h"
#include "tensor/ops.h"

namespace ts::data {
namespace {

std::string generate(int rows, int features, int per_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-0.05, 0.05);
  std::string text;
  char buffer[48];
  for (int r = 0; r < rows; ++r) {
    text += rng() % 2 ? "1" : "-1";
    const int stride = features / per_row;
    for (int k = 0; k < per_row; ++k) {
      const int index = 1 + k * stride + static_cast<int>(rng() % stride);
      std::snprintf(buffer, sizeof buffer, " %d:%.6g", index, value(rng));
      text += buffer;
    }
    text += '\n';
  }
  return text;
}

const std::string& epsilon_like() {
  static const auto* text = new std::string(generate(2000, 2000, 2000, 1));
  return *text;
}
const std::string& sparse_like() {
  static const auto* text = new std::string(generate(60000, 47000, 75, 2));
  return *text;
}

void run_parse(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    auto m = parse_libsvm(text, "bench");
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}

void BM_ParseEpsilonLike(benchmark::State& state) { run_parse(state, epsilon_like()); }
void BM_ParseSparseLike(benchmark::State& state) { run_parse(state, sparse_like()); }

// Through the file reader (4 MiB chunks), from the page cache.
void BM_ReadFileEpsilonLike(benchmark::State& state) {
  // A name of this run's own (mkstemp): two runs at once must not share it.
  std::string path = "/tmp/ts_libsvm_benchmark.XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0 || ::close(fd) != 0 || !write_file_atomically(path, epsilon_like()).ok()) {
    state.SkipWithError("cannot write the temp file");
  }
  for (auto _ : state) {
    auto m = read_libsvm(path);
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(epsilon_like().size()));
  std::remove(path.c_str());
}

// 60000 random 28x28 images, as Fashion-MNIST's train split.
void BM_IdxGet(benchmark::State& state) {
  absl::StatusOr<IdxImageSet> set = capture([] {
    return IdxImageSet{ts::empty({60000, 1, 28, 28}, {DType::kU8}), ts::zeros({60000}, {DType::kI64})};
  });
  if (!set.ok()) {
    state.SkipWithError("allocation failed");
    return;
  }
  const IdxImageDataset dataset(*std::move(set));
  int64_t i = 0;
  for (auto _ : state) {
    auto example = dataset.get(i);
    benchmark::DoNotOptimize(example);
    i = (i + 7919) % 60000;
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_ParseEpsilonLike)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseSparseLike)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadFileEpsilonLike)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IdxGet);

}  // namespace
}  // namespace ts::data

BENCHMARK_MAIN();
