// The training losses of the steps not read yet, each a 0-dim tensor where
// its step computed it. Nothing reads a loss per step (on a GPU that would
// make the host wait for every step before queueing the next): the trainer
// reads them all at once when the progress line, an epoch's record, a
// checkpoint or the report needs them.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace ts::tasks {

struct StepLoss {
  int64_t global_step = 0;  // 1-based: the step's number once it is done
  int64_t samples = 0;
  // Run time at the step's end: on a GPU, when the host had queued its work.
  double run_seconds = 0;
  double value = 0;
};

class LossLog {
 public:
  void add(int64_t global_step, int64_t samples, double run_seconds, Tensor loss);
  bool empty() const { return losses_.empty(); }
  size_t size() const { return losses_.size(); }
  // Every pending loss in step order, moved to the host in one copy; the log
  // is empty afterwards.
  std::vector<StepLoss> read();

 private:
  std::vector<StepLoss> steps_;  // values filled in by read()
  std::vector<Tensor> losses_;
};

}  // namespace ts::tasks
