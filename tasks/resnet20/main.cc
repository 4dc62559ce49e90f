// MLBench task 1: ResNet-20 image classification. The default trains on
// Fashion-MNIST padded to 32x32 (Debian's dataset-fashion-mnist); CIFAR-10
// binary batches with --dataset=CIFAR10 --data_path=DIR; a synthetic set of
// the same shapes with --synthetic. Under tools/launch each rank trains on
// its shard with DDP and the lr follows MLBench's linear scaling rule.
#include <memory>

#include "nn/models/resnet_cifar.h"
#include "tasks/common/classification.h"
#include "tasks/common/image_data.h"
#include "tasks/common/task_main.h"
#include "tensor/status_macros.h"

namespace ts::tasks {
namespace {

absl::Status run(int argc, char** argv) {
  ASSIGN_OR_RETURN(TaskStart task, start_task(argc, argv, "tasks/resnet20/config.textproto"));
  ASSIGN_OR_RETURN(ClassificationData data, open_image_data(task.runner->config()));
  ASSIGN_OR_RETURN(std::shared_ptr<nn::Module> model,
                   nn::models::resnet20(data.num_classes, data.channels));
  return train_classifier(*task.runner, task.dist, std::move(model), data, cross_entropy_recipe());
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::finish_task("resnet20", ts::tasks::run(argc, argv));
}
