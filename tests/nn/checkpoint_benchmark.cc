// Checkpoint speed: CRC-32C throughput, and saving / loading ResNet-50's
// state dict (~100 MB, fsync included) in a directory of its own under the
// temporary directory (TMPDIR), removed at exit, so runs that overlap do
// not write one file.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "base/crc32c.h"
#include "benchmark/benchmark.h"
#include "nn/checkpoint.h"
#include "nn/models/resnet.h"

namespace ts::nn {
namespace {

void BM_Crc32c(benchmark::State& state) {
  const std::string bytes(state.range(0), 'x');
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(bytes));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_Crc32c)->Arg(1 << 20)->Arg(64 << 20);

// A directory made for this run (mkdtemp), removed with what is in it when
// the program ends.
class RunDirectory {
 public:
  RunDirectory() {
    std::string name = (std::filesystem::temp_directory_path() / "checkpoint_benchmark.XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) {
      std::perror("checkpoint_benchmark: mkdtemp");
      std::exit(1);
    }
    path_ = name;
  }
  ~RunDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

const std::string& checkpoint_path() {
  static const RunDirectory dir;
  static const std::string path = (dir.path() / "resnet50.ckpt").string();
  return path;
}

std::shared_ptr<Module> model() {
  static std::shared_ptr<Module> m = models::resnet50();
  return m;
}

int64_t state_bytes(const Module& m) {
  int64_t bytes = 0;
  for (const auto& [name, t] : m.state_dict()) bytes += t.numel() * t.itemsize();
  return bytes;
}

void BM_SaveResNet50(benchmark::State& state) {
  const auto m = model();
  for (auto _ : state) {
    if (!save_state_dict(*m, checkpoint_path()).ok()) state.SkipWithError("save failed");
  }
  state.SetBytesProcessed(state.iterations() * state_bytes(*m));
}
BENCHMARK(BM_SaveResNet50)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadResNet50(benchmark::State& state) {
  const auto m = model();
  if (!save_state_dict(*m, checkpoint_path()).ok()) state.SkipWithError("save failed");
  for (auto _ : state) {
    if (!load_state_dict(*m, checkpoint_path()).ok()) state.SkipWithError("load failed");
  }
  state.SetBytesProcessed(state.iterations() * state_bytes(*m));
  std::filesystem::remove(checkpoint_path());
}
BENCHMARK(BM_LoadResNet50)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ts::nn

BENCHMARK_MAIN();
