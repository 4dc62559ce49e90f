// Training a classifier with the task runner: loaders over the train and
// test splits (sharded across ranks), DDP when there is more than one rank,
// SGD with the config's schedule and MLBench's lr scaling, a task-given loss
// and score, evaluation after each epoch, and checkpoint state. The ResNet
// tasks and logistic regression differ only in their data, model and loss.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "autograd/variable.h"
#include "data/dataset.h"
#include "data/loader/transform.h"
#include "nn/module.h"
#include "optim/lr_schedule.h"
#include "tasks/common/distributed.h"
#include "tasks/common/evaluation.h"
#include "tasks/common/runner.h"

namespace ts::tasks {

// Examples are {input, target}.
struct ClassificationData {
  std::shared_ptr<const data::Dataset> train;
  std::shared_ptr<const data::Dataset> test;
  data::Transform train_transform;  // empty: none
  data::Transform test_transform;
  int64_t channels = 0;     // images; 0 otherwise
  int64_t num_classes = 0;  // 1: a binary problem with one logit
  std::string description;  // for the report: "fashion-mnist (/usr/share/...)"
};

struct ClassificationRecipe {
  // The training loss of a batch's model outputs.
  std::function<absl::StatusOr<autograd::Variable>(const autograd::Variable& outputs,
                                                   const Tensor& targets)>
      loss;
  // Evaluation: summed loss and correct predictions of a batch.
  ScoreFn score;
  // How the per-worker lr of the config grows with the world size.
  optim::LrScaling lr_scaling = optim::LrScaling::kLinear;
};

// Trains `model` on the runner's device; reports "accuracy" and "loss" of
// the test split after each epoch.
absl::Status train_classifier(Runner& runner, Distributed& dist, std::shared_ptr<nn::Module> model,
                              const ClassificationData& splits, const ClassificationRecipe& recipe);

// Cross-entropy training and scoring (multi-class logits [N, C]).
ClassificationRecipe cross_entropy_recipe();

}  // namespace ts::tasks
