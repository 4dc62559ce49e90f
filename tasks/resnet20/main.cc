// MLBench task 1: ResNet-20 image classification. The default trains on
// Fashion-MNIST padded to 32x32 (Debian's dataset-fashion-mnist); CIFAR-10
// binary batches with --dataset=CIFAR10 --data_path=DIR; a synthetic set of
// the same shapes with --synthetic. Under tools/launch each rank trains on
// its shard with DDP and the lr follows MLBench's linear scaling rule.
#include <memory>

#include "base/error.h"
#include "base/status_macros.h"
#include "data/sets/image_classification.h"
#include "nn/models/resnet_cifar.h"
#include "tasks/common/classification.h"
#include "tasks/common/task_main.h"
#include "tasks/resnet20/default_config.h"
#include "tasks/resnet20/resnet20.pb.h"

namespace ts::tasks {
namespace {

absl::StatusOr<std::unique_ptr<Recipe>> make_recipe(const TaskContext& task) {
  const TaskConfig& config = task.config;
  const ResNet20Config& settings = config.GetExtension(resnet20);
  data::ImageClassificationOptions options;
  options.set =
      settings.dataset() == ResNet20Config::CIFAR10 ? data::ImageSet::kCifar10 : data::ImageSet::kFashionMnist;
  options.path = config.data_path();
  options.synthetic = config.synthetic();
  options.seed = config.seed();
  ASSIGN_OR_RETURN(data::ImageClassificationData images, data::open_image_classification(options));
  TrainingData data{images.train, images.test, images.train_transform, images.test_transform, images.description};
  return capture([&]() -> std::unique_ptr<Recipe> {
    return std::make_unique<ClassificationRecipe>(
        std::move(data), nn::Handle(nn::models::resnet_cifar(settings.depth(), images.num_classes, images.channels)),
        cross_entropy_objective());
  });
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::run_task(argc, argv, {"resnet20", kResNet20DefaultConfig}, ts::tasks::make_recipe);
}
