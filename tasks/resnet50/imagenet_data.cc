#include "tasks/resnet50/imagenet_data.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "data/synthetic/images.h"
#include "data/transforms/jpeg_pipeline.h"
#include "tasks/resnet50/resnet50.pb.h"
#include "tools/corpus/jpeg_folder.h"

namespace ts::tasks {
namespace {

constexpr int64_t kImageNetClasses = 1000, kImageNetTrain = 1281167, kImageNetVal = 50000;
constexpr int64_t kFashionMnistTrain = 60000, kFashionMnistVal = 10000;

absl::StatusOr<ImageNetData> synthetic_data(const TaskConfig& config, const ResNet50Config& r) {
  const bool imagenet = r.dataset() == ResNet50Config::IMAGE_FOLDER;
  const int64_t per_class = r.jpeg_limit_per_class();
  data::SyntheticImageOptions options;
  options.num_classes = imagenet ? kImageNetClasses : 10;
  options.size = imagenet ? kImageNetTrain : per_class > 0 ? 10 * per_class : kFashionMnistTrain;
  options.channels = 3;
  options.height = options.width = r.image_size();
  options.dtype = DType::kF32;
  options.seed = config.seed();
  ImageNetData out;
  out.num_classes = options.num_classes;
  ASSIGN_OR_RETURN(std::shared_ptr<data::SyntheticImages> train, data::SyntheticImages::create(options));
  options.first_sample = options.size;
  options.size = imagenet ? kImageNetVal : per_class > 0 ? 10 * per_class : kFashionMnistVal;
  ASSIGN_OR_RETURN(std::shared_ptr<data::SyntheticImages> val, data::SyntheticImages::create(options));
  out.data = TrainingData{std::move(train), std::move(val), nullptr, nullptr,
                          absl::StrCat("synthetic ", imagenet ? "ImageNet" : "Fashion-MNIST", " shapes, ",
                                       r.image_size(), "x", r.image_size())};
  return out;
}

}  // namespace

absl::StatusOr<ImageNetData> open_imagenet_data(const TaskConfig& config) {
  const ResNet50Config& r = config.GetExtension(resnet50);
  if (r.image_size() < 8 || r.eval_resize() < r.image_size() || !(r.min_crop_scale() > 0 && r.min_crop_scale() <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("resnet50: image_size ", r.image_size(), ", eval_resize ",
                                                   r.eval_resize(), " and min_crop_scale ", r.min_crop_scale(),
                                                   " need image_size >= 8, eval_resize >= image_size and a crop "
                                                   "scale in (0, 1]"));
  }
  if (config.synthetic()) return synthetic_data(config, r);
  std::string root = config.data_path();
  if (r.dataset() == ResNet50Config::FASHION_MNIST_JPEG) {
    if (!root.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("resnet50: data_path ", root,
                                                     " is read only with dataset IMAGE_FOLDER; the default "
                                                     "dataset FASHION_MNIST_JPEG is built in the cache"));
    }
    corpus::JpegFolderOptions options;
    options.size = r.jpeg_size();
    options.limit_per_class = r.jpeg_limit_per_class();
    ASSIGN_OR_RETURN(root, corpus::cached_jpeg_folder(
                               r.cache_dir().empty() ? default_cache_dir() : user_path(r.cache_dir()), options));
  } else if (root.empty()) {
    return absl::InvalidArgumentError("resnet50: dataset IMAGE_FOLDER needs --data_path=DIR (DIR/train, DIR/val)");
  }
  data::ImageFolderOptions train_options;
  train_options.pipeline = data::transforms::train_pipeline({.size = r.image_size(), .min_scale = r.min_crop_scale()});
  train_options.skip_corrupt = r.skip_corrupt();
  data::ImageFolderOptions val_options;
  val_options.pipeline = data::transforms::eval_pipeline(r.eval_resize(), r.image_size());
  // Training only: ImageFolder serves the next image that decodes in a
  // corrupt one's place, which would count that image twice in the
  // validation accuracy and the corrupt one never.
  ImageNetData out;
  ASSIGN_OR_RETURN(out.train_folder, data::ImageFolder::open(join_path(root, "train"), train_options));
  ASSIGN_OR_RETURN(out.val_folder, data::ImageFolder::open(join_path(root, "val"), val_options));
  if (out.val_folder->classes() != out.train_folder->classes()) {
    return absl::InvalidArgumentError(absl::StrCat("resnet50: ", root, "/train has ",
                                                   out.train_folder->classes().size(), " classes and ", root,
                                                   "/val has ", out.val_folder->classes().size(), ", not the same"));
  }
  out.num_classes = static_cast<int64_t>(out.train_folder->classes().size());
  out.data = TrainingData{out.train_folder, out.val_folder, nullptr, nullptr,
                          absl::StrCat("JPEG folder ", root, " (", out.train_folder->size(), " training and ",
                                       out.val_folder->size(), " validation images, ", out.num_classes, " classes)")};
  if (r.skip_corrupt()) {
    out.data.statistics = [train = out.train_folder] {
      Json stats = Json::object();
      stats["corrupt_files_skipped"] = train->corrupt_files();
      return stats;
    };
  }
  return out;
}

}  // namespace ts::tasks
