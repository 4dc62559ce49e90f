// ImageNet ResNet-50 in mixed precision: the HAL benchmark's recipe
// (hal.textproto: torchvision's ResNet-50, SGD momentum 0.9, weight decay
// 1e-4, 90 epochs, lr 0.1 x global batch / 256 with a 5-epoch gradual
// warm-up and decay at epochs 30, 60 and 80, batch 208 per GPU, f16 with f32
// master weights and dynamic loss scaling; top-1 and top-5 accuracy). The
// default config trains Fashion-MNIST written as a JPEG folder in ImageNet's
// layout, small enough for a CPU; --dataset=IMAGE_FOLDER --data_path=DIR
// reads ImageNet; --synthetic measures throughput. Under tools/launch each
// rank trains its shard with DDP (NCCL on GPUs) and the lr scales linearly
// with the world size.
#include <memory>

#include "base/error.h"
#include "base/status_macros.h"
#include "nn/models/resnet.h"
#include "tasks/common/classification.h"
#include "tasks/common/task_main.h"
#include "tasks/resnet50/default_config.h"
#include "tasks/resnet50/imagenet_data.h"
#include "tasks/resnet50/resnet50.pb.h"

namespace ts::tasks {
namespace {

absl::StatusOr<std::unique_ptr<Recipe>> make_recipe(const TaskContext& task) {
  const ResNet50Config& settings = task.config.GetExtension(resnet50);
  ASSIGN_OR_RETURN(ImageNetData images, open_imagenet_data(task.config));
  return capture([&]() -> std::unique_ptr<Recipe> {
    return std::make_unique<ClassificationRecipe>(std::move(images.data),
                                                  nn::Handle(nn::models::resnet(settings.model(), images.num_classes)),
                                                  // Top-5 of fewer than 5 classes would always be 1.
                                                  cross_entropy_objective(/*top5=*/images.num_classes >= 5));
  });
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::run_task(argc, argv, {"resnet50", kResNet50DefaultConfig}, ts::tasks::make_recipe);
}
