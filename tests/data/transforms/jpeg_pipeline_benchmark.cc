// The training path of an ImageNet-style folder on one thread, per image:
// read the file, decode, RandomResizedCrop(224), flip, normalize to f32
// [3, 224, 224]; images/s over the JPEG sets it writes under --jpeg_dir
// (kept there, so that tools/golden/jpeg_pillow.py bench times Pillow on the
// same files):
//   imagenet_like  32 images of 500x375 (ImageNet's commonest size; a
//                  mosaic of Fashion-MNIST items on a noisy background, so
//                  that it compresses about as photos do: 96 KB a file,
//                  ImageNet's mean is about 110 KB), quality 90, 4:2:0
//   fashion_64     the Fashion-MNIST folder of tools/corpus at 64x64, 10
//                  images per class and split
// TrainPipeline is the fused path the loader runs; TrainUnfused decodes and
// then applies the Transforms one by one; Decode only decodes. Without
// --jpeg_dir the sets go to a directory of the run's own under TMPDIR
// (mkdtemp), removed at the end, so that runs which overlap write no files
// in common.
//   bazel run //tests/data/transforms:jpeg_pipeline_benchmark -- --jpeg_dir=/tmp/jpeg_bench
//   tools/golden/jpeg_pillow.py bench /tmp/jpeg_bench
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/files.h"
#include "benchmark/benchmark.h"
#include "data/loader/random_stream.h"
#include "data/readers/idx.h"
#include "data/readers/jpeg.h"
#include "data/readers/jpeg_encode.h"
#include "data/transforms/image.h"
#include "data/transforms/jpeg_pipeline.h"
#include "data/transforms/resize.h"
#include "data/transforms/resized_crop.h"
#include "tensor/ops.h"
#include "tools/corpus/jpeg_folder.h"

namespace ts::data {
namespace {

namespace fs = std::filesystem;

void die(const absl::Status& status) {
  std::fprintf(stderr, "jpeg_pipeline_benchmark: %s\n", std::string(status.message()).c_str());
  std::exit(1);
}

template <typename T>
T value_or_die(absl::StatusOr<T> value) {
  if (!value.ok()) die(value.status());
  return *std::move(value);
}

// A 375x500 picture: a smooth colored background with pixel noise, and
// Fashion-MNIST items of random sizes blended in with random tints.
Tensor mosaic(const IdxImageDataset& items, uint64_t seed) {
  constexpr int64_t kHeight = 375, kWidth = 500;
  RandomStream rng(seed, 0);
  std::vector<float> canvas(kHeight * kWidth * 3);
  const double phase = rng.uniform() * 6.28;
  for (int64_t y = 0; y < kHeight; ++y) {
    for (int64_t x = 0; x < kWidth; ++x) {
      float* p = &canvas[(y * kWidth + x) * 3];
      p[0] = 120 + 70 * std::sin(x / 53.0 + phase) + 32 * rng.normal();
      p[1] = 110 + 60 * std::cos(y / 41.0 - phase) + 32 * rng.normal();
      p[2] = 100 + 50 * std::sin((x + y) / 67.0) + 32 * rng.normal();
    }
  }
  for (int item = 0; item < 14; ++item) {
    const int64_t side = 60 + rng.uniform_int(160);
    const Tensor gray =
        value_or_die(transforms::resize_image(items.images().select(0, rng.uniform_int(items.size())), side, side));
    const uint8_t* a = gray.data<uint8_t>();
    const int64_t top = rng.uniform_int(kHeight - side + 1), left = rng.uniform_int(kWidth - side + 1);
    const float tint[3] = {static_cast<float>(rng.uniform() * 255), static_cast<float>(rng.uniform() * 255),
                           static_cast<float>(rng.uniform() * 255)};
    for (int64_t y = 0; y < side; ++y) {
      for (int64_t x = 0; x < side; ++x) {
        const float alpha = a[y * side + x] / 255.0f;
        float* p = &canvas[((top + y) * kWidth + left + x) * 3];
        for (int c = 0; c < 3; ++c) p[c] = p[c] * (1 - alpha) + tint[c] * alpha * (0.6f + 0.4f * alpha);
      }
    }
  }
  Tensor rgb = Tensor::allocate({kHeight, kWidth, 3}, DType::kU8, Device::cpu());
  uint8_t* out = rgb.data<uint8_t>();
  for (size_t i = 0; i < canvas.size(); ++i) out[i] = static_cast<uint8_t>(std::clamp(canvas[i], 0.0f, 255.0f));
  return rgb;
}

void write_sets(const std::string& dir) {
  const std::string imagenet_like = join_path(dir, "imagenet_like");
  if (!fs::exists(imagenet_like)) {
    const auto items = value_or_die(open_mnist(kFashionMnistDir, /*train=*/true));
    const std::string partial = imagenet_like + ".partial";
    if (auto s = make_dirs(partial); !s.ok()) die(s);
    for (int i = 0; i < 32; ++i) {
      const std::string jpeg = value_or_die(encode_jpeg(mosaic(*items, i)));
      if (auto s = write_file_atomically(join_path(partial, absl::StrFormat("%02d.JPEG", i)), jpeg); !s.ok()) die(s);
    }
    fs::rename(partial, imagenet_like);
  }
  const std::string fashion = join_path(dir, "fashion_64");
  if (!fs::exists(fashion)) {
    corpus::JpegFolderOptions options;
    options.out_dir = fashion;
    options.limit_per_class = 10;
    value_or_die(corpus::build_jpeg_folder(options));
  }
}

std::vector<std::string> jpeg_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".JPEG") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `per_image(bytes, path, rng)` over every file once per iteration.
template <typename F>
void run(benchmark::State& state, const std::vector<std::string>& files, F per_image) {
  int64_t pass = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string bytes = value_or_die(read_file(files[i]));
      RandomStream rng = RandomStream::for_sample(0, pass, i);
      absl::StatusOr<Tensor> out = per_image(bytes, files[i], rng);
      if (!out.ok()) {
        state.SkipWithError(std::string(out.status().message()).c_str());
        return;
      }
      benchmark::DoNotOptimize(out->raw_data());
    }
    ++pass;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(files.size()));
  state.counters["images"] = static_cast<double>(files.size());
}

void register_set(const std::string& name, const std::vector<std::string>& files) {
  benchmark::RegisterBenchmark(absl::StrCat("TrainPipeline/", name).c_str(), [files](benchmark::State& state) {
    run(state, files, transforms::train_pipeline());
  })->Unit(benchmark::kMillisecond);
  const Transform chain = compose({transforms::random_resized_crop(), transforms::random_horizontal_flip(0.5),
                                   transforms::normalize(transforms::kImageNetMean, transforms::kImageNetStd)});
  benchmark::RegisterBenchmark(absl::StrCat("TrainUnfused/", name).c_str(), [files, chain](benchmark::State& state) {
    const transforms::JpegPipeline decode = transforms::decode_pipeline();
    run(state, files,
        [&](absl::string_view bytes, absl::string_view path, RandomStream& rng) -> absl::StatusOr<Tensor> {
          absl::StatusOr<Tensor> image = decode(bytes, path, rng);
          if (!image.ok()) return image.status();
          absl::StatusOr<Example> example = chain(Example{{*image}}, rng);
          if (!example.ok()) return example.status();
          return example->fields[0];
        });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(absl::StrCat("Decode/", name).c_str(), [files](benchmark::State& state) {
    run(state, files,
        [](absl::string_view bytes, absl::string_view path, RandomStream&) { return decode_jpeg(bytes, path); });
  })->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace ts::data

int main(int argc, char** argv) {
  std::string dir;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--jpeg_dir=", 0) == 0) {
      dir = arg.substr(11);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (dir.empty()) {
    dir = (std::filesystem::temp_directory_path() / "jpeg_pipeline_benchmark.XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("jpeg_pipeline_benchmark: mkdtemp");
      return 1;
    }
    // Removed on every way out that runs exit handlers (die() included).
    static const std::string own_dir = dir;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(own_dir, ignored);
    });
  }
  ts::data::write_sets(dir);
  for (const char* set : {"imagenet_like", "fashion_64"}) {
    ts::data::register_set(set, ts::data::jpeg_files(ts::join_path(dir, set)));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
