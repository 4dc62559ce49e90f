// What a task gives the trainer (trainer.h): its data, its model, how a batch
// becomes a loss, and how evaluation batches become metrics. Everything else
// - devices, DDP, the optimizer, the learning rate, gradient accumulation,
// checkpoints, timing, reports - is the trainer's, the same for every task.
//
// Recipe methods are model code: they throw ts::Error on misuse (the trainer
// turns it into the run's error, naming the step).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "autograd/variable.h"
#include "data/dataset.h"
#include "data/loader/transform.h"
#include "nn/module.h"
#include "optim/lr_schedule.h"
#include "tensor/tensor.h"

namespace ts::tasks {

// Named values of an evaluation, e.g. {"accuracy": 0.91, "loss": 0.27}.
using Metrics = std::map<std::string, double>;
// Named 0-dim tensors on the device, summed over the evaluation batches and
// ranks before metrics() sees them.
using EvalSums = std::map<std::string, Tensor>;

struct TrainingData {
  std::shared_ptr<const data::Dataset> train;
  std::shared_ptr<const data::Dataset> eval;
  data::Transform train_transform;  // empty: none
  data::Transform eval_transform;
  std::string description;  // for the report: "fashion-mnist (/usr/share/...)"
};

class Recipe {
 public:
  virtual ~Recipe() = default;

  virtual const TrainingData& data() const = 0;
  // Built on the CPU; the trainer moves it to the run's device, wraps it in
  // DDP and gives its parameters to the optimizer.
  virtual std::shared_ptr<nn::Module> model() const = 0;
  // One training batch (its fields, on the device) through the model: the
  // mean loss over the batch, a 0-dim Variable on the device. The trainer
  // runs the backward and the optimizer, and reads the value only when the
  // progress line or a metric needs it.
  virtual autograd::Variable loss(absl::Span<const Tensor> batch) = 0;
  // One evaluation batch, in eval mode without a graph: sums to accumulate.
  virtual EvalSums evaluate(absl::Span<const Tensor> batch) = 0;
  // The metrics from the sums over the whole evaluation set of every rank;
  // they must include the config's target_metric (and "loss" for the
  // PLATEAU schedule).
  virtual Metrics metrics(const std::map<std::string, double>& sums) const = 0;
  // How the per-worker lr of the config grows with the world size (MLBench's
  // rule for the task).
  virtual optim::LrScaling lr_scaling() const { return optim::LrScaling::kLinear; }
};

}  // namespace ts::tasks
