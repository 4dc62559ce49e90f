// MLBench task 2: logistic regression (the epsilon recipe: SGD lr 4 per
// worker scaled by the world size, no momentum, binary cross-entropy plus an
// L2 term of 2.5e-6, reduce-on-plateau). Reads any LIBSVM file pair with
// --data_path=DIR (train.libsvm, test.libsvm; the epsilon set on a cluster);
// by default Fashion-MNIST as the binary problem of fashion_libsvm.h,
// written as LIBSVM under the output directory on first use.
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "data/readers/idx.h"
#include "data/readers/libsvm.h"
#include "nn/losses.h"
#include "nn/models/logistic_regression.h"
#include "tasks/common/classification.h"
#include "tasks/common/task_main.h"
#include "tasks/logreg/fashion_libsvm.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::tasks {
namespace {

constexpr double kL2 = 2.5e-6;

// The default LIBSVM files, made from Fashion-MNIST once. Only rank 0
// writes them; the write is atomic, and other ranks wait for the file.
absl::StatusOr<std::string> default_libsvm_dir(const TaskConfig& config, const Distributed& dist) {
  const std::string dir = absl::StrCat(config.output_dir(), "/data/fashion_upper_body");
  for (const bool train : {true, false}) {
    const std::string path = absl::StrCat(dir, train ? "/train.libsvm" : "/test.libsvm");
    if (std::filesystem::exists(path)) continue;
    if (dist.rank() == 0) {
      std::filesystem::create_directories(dir);
      ASSIGN_OR_RETURN(std::unique_ptr<data::IdxImageDataset> images,
                       data::open_mnist(data::kFashionMnistDir, train));
      RETURN_IF_ERROR(write_upper_body_libsvm(*images, path));
    }
  }
  // synchronize(): NCCL's wait() only orders streams; the files must exist.
  if (dist.comm != nullptr) RETURN_IF_ERROR(dist.comm->barrier().synchronize());
  return dir;
}

absl::StatusOr<ClassificationData> open_libsvm_data(const TaskConfig& config,
                                                    const Distributed& dist) {
  std::string dir = config.data_path();
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, default_libsvm_dir(config, dist));
  }
  ClassificationData splits;
  ASSIGN_OR_RETURN(std::unique_ptr<data::LibsvmDataset> train,
                   data::LibsvmDataset::open(absl::StrCat(dir, "/train.libsvm")));
  data::LibsvmOptions test_options;
  test_options.num_features = train->matrix().num_features;
  ASSIGN_OR_RETURN(std::unique_ptr<data::LibsvmDataset> test,
                   data::LibsvmDataset::open(absl::StrCat(dir, "/test.libsvm"), test_options));
  splits.description = absl::StrCat("libsvm (", dir, "): ", train->size(), " train and ",
                                  test->size(), " test rows of ", train->matrix().num_features,
                                  " features");
  splits.num_classes = 1;
  splits.train = std::move(train);
  splits.test = std::move(test);
  return splits;
}

// Labels i64 {0, 1} [N] as f32, like the logits [N].
absl::StatusOr<Tensor> as_logit_targets(const Tensor& labels) { return to(labels, DType::kF32); }

ClassificationRecipe logistic_recipe(std::shared_ptr<nn::Module> model) {
  ClassificationRecipe recipe;
  recipe.loss = [model](const autograd::Variable& logits,
                        const Tensor& labels) -> absl::StatusOr<autograd::Variable> {
    ASSIGN_OR_RETURN(Tensor targets, as_logit_targets(labels));
    ASSIGN_OR_RETURN(autograd::Variable bce, nn::binary_cross_entropy_with_logits(logits, targets));
    ASSIGN_OR_RETURN(autograd::Variable l2, nn::l2_regularization(model->parameters(), kL2));
    return autograd::add(bce, l2);
  };
  recipe.score = [](const Tensor& logits, const Tensor& labels) -> absl::StatusOr<BatchScore> {
    ASSIGN_OR_RETURN(Tensor targets, as_logit_targets(labels));
    ASSIGN_OR_RETURN(autograd::Variable loss,
                     nn::binary_cross_entropy_with_logits(autograd::Variable(logits), targets,
                                                          nn::Reduction::kSum));
    ASSIGN_OR_RETURN(Tensor loss_cpu, to(loss.data(), Device::cpu()));
    BatchScore score;
    ASSIGN_OR_RETURN(const float loss_sum, item<float>(loss_cpu));
    score.loss_sum = loss_sum;
    ASSIGN_OR_RETURN(score.correct, nn::binary_correct(logits, targets));
    score.samples = logits.size(0);
    return score;
  };
  recipe.lr_scaling = optim::LrScaling::kLinear;
  return recipe;
}

absl::Status run(int argc, char** argv) {
  ASSIGN_OR_RETURN(TaskStart task, start_task(argc, argv, "tasks/logreg/config.textproto"));
  ASSIGN_OR_RETURN(ClassificationData splits, open_libsvm_data(task.runner->config(), task.dist));
  const int64_t features =
      static_cast<const data::LibsvmDataset&>(*splits.train).matrix().num_features;
  ASSIGN_OR_RETURN(std::shared_ptr<nn::Module> model, nn::models::logistic_regression(features));
  return train_classifier(*task.runner, task.dist, model, splits, logistic_recipe(model));
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::finish_task("logreg", ts::tasks::run(argc, argv));
}
