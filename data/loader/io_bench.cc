// io_bench: the loader with no model (SC21's "benchy IO"): samples/s and
// resident memory for Fashion-MNIST (Debian's dataset-fashion-mnist) or a
// synthetic set of the same shapes, with the ResNet-20 CPU augmentations.
//   bazel run //data/loader:io_bench -- --workers=2 --batch_size=128
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "data/loader/io_mode.h"
#include "data/readers/idx.h"
#include "data/synthetic/images.h"
#include "data/transforms/image.h"

ABSL_FLAG(std::string, dataset, "fashion_mnist", "fashion_mnist (the train split) or synthetic (same shapes)");
ABSL_FLAG(std::string, data_dir, ts::data::kFashionMnistDir, "where the Fashion-MNIST IDX files are");
ABSL_FLAG(int64_t, batch_size, 128, "samples per batch");
ABSL_FLAG(int32_t, workers, 2, "loader worker threads");
ABSL_FLAG(int32_t, prefetch, 4, "batches prepared ahead of the consumer");
ABSL_FLAG(int64_t, epochs, 1, "epochs to run");
ABSL_FLAG(bool, augment, true, "random crop (padding 4) + horizontal flip + normalize, as ResNet-20 trains");
ABSL_FLAG(bool, shuffle, true, "shuffle every epoch");
ABSL_FLAG(uint64_t, seed, 0, "sampler and augmentation seed");

namespace ts::data {
namespace {

absl::StatusOr<std::shared_ptr<const Dataset>> open_dataset() {
  const std::string name = absl::GetFlag(FLAGS_dataset);
  if (name == "fashion_mnist") {
    absl::StatusOr<std::unique_ptr<IdxImageDataset>> set = open_mnist(absl::GetFlag(FLAGS_data_dir), /*train=*/true);
    if (!set.ok()) return set.status();
    return std::shared_ptr<const Dataset>(std::move(*set));
  }
  if (name == "synthetic") {
    absl::StatusOr<std::unique_ptr<SyntheticImages>> set = SyntheticImages::create({.seed = absl::GetFlag(FLAGS_seed)});
    if (!set.ok()) return set.status();
    return std::shared_ptr<const Dataset>(std::move(*set));
  }
  return absl::InvalidArgumentError("--dataset must be fashion_mnist or synthetic, got " + name);
}

absl::Status run() {
  absl::StatusOr<std::shared_ptr<const Dataset>> dataset = open_dataset();
  if (!dataset.ok()) return dataset.status();
  const int64_t n = (*dataset)->size();
  std::unique_ptr<Sampler> sampler;
  if (absl::GetFlag(FLAGS_shuffle)) {
    sampler = std::make_unique<ShuffledSampler>(n, absl::GetFlag(FLAGS_seed));
  } else {
    sampler = std::make_unique<SequentialSampler>(n);
  }
  LoaderOptions options{.batch_size = absl::GetFlag(FLAGS_batch_size),
                        .num_workers = absl::GetFlag(FLAGS_workers),
                        .prefetch_depth = absl::GetFlag(FLAGS_prefetch),
                        .seed = absl::GetFlag(FLAGS_seed)};
  if (absl::GetFlag(FLAGS_augment)) {
    // Fashion-MNIST's mean and std of the train pixels.
    options.transform = compose({transforms::random_crop(28, 28, 4), transforms::random_horizontal_flip(),
                                 transforms::normalize({0.2860f}, {0.3530f})});
  }
  absl::StatusOr<std::unique_ptr<DataLoader>> loader = DataLoader::create(*dataset, std::move(sampler), options);
  if (!loader.ok()) return loader.status();
  absl::StatusOr<IoReport> report = run_io_only(**loader, absl::GetFlag(FLAGS_epochs));
  if (!report.ok()) return report.status();
  std::printf("io_bench: %s, %lld samples, batch %lld, %d workers, prefetch %d, augment %d, pinned %d\n",
              absl::GetFlag(FLAGS_dataset).c_str(), static_cast<long long>(n),
              static_cast<long long>(options.batch_size), options.num_workers, options.prefetch_depth,
              absl::GetFlag(FLAGS_augment) ? 1 : 0, (*loader)->pinned() ? 1 : 0);
  std::printf("io_bench: %s\n", report->to_string().c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace ts::data

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Iterates the data loader with no model and reports samples/s and resident memory.");
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = ts::data::run();
  if (!status.ok()) {
    std::fprintf(stderr, "io_bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
