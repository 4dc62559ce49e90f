// A per-step curve of a training run (the loss of every step, with its global
// step and run time) for the report's "curves" section. It stays bounded on
// long runs: once it holds more than max_points points, every other point is
// dropped and only every stride-th step is kept from then on, the stride
// doubling each time, so the curve spans the whole run evenly with between
// max_points / 2 and max_points points. The kept steps are 1, 1 + stride,
// 1 + 2 * stride, ...: the first step's value stays. The points live in a
// CurvePoints message of the run state, so checkpoints carry them and a
// resumed run's curve is the uninterrupted run's.
#pragma once

#include <cstdint>

#include "base/json.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

class Curve {
 public:
  static constexpr int kDefaultMaxPoints = 10000;

  // `points` must outlive it; max_points >= 2.
  explicit Curve(CurvePoints* points, int max_points = kDefaultMaxPoints);

  // Steps come in increasing order.
  void add(int64_t step, double seconds, double value);
  // {"step": [...], "seconds": [...], "value": [...]}, in step order.
  Json to_json() const;

 private:
  bool kept(int64_t step) const { return (step - 1) % points_->stride() == 0; }
  void thin();

  CurvePoints* points_;
  int max_points_;
};

}  // namespace ts::tasks
