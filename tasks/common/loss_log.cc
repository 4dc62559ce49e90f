#include "tasks/common/loss_log.h"

#include <utility>

#include "tensor/ops.h"

namespace ts::tasks {

void LossLog::add(int64_t global_step, int64_t samples, double run_seconds, Tensor loss) {
  steps_.push_back({global_step, samples, run_seconds, 0});
  losses_.push_back(std::move(loss));
}

std::vector<StepLoss> LossLog::read() {
  if (losses_.empty()) return {};
  const std::vector<double> values = to_vector<double>(stack(losses_, 0));
  std::vector<StepLoss> steps = std::move(steps_);
  for (size_t i = 0; i < steps.size(); ++i) steps[i].value = values[i];
  steps_.clear();
  losses_.clear();
  return steps;
}

}  // namespace ts::tasks
