// Gradient synchronization for data parallelism: hooks on every parameter
// copy its final gradient into a bucket; a full bucket's allreduce (average)
// starts at once, in bucket order, while backward goes on with earlier
// layers. When the last bucket is launched, the reducer waits for all of
// them and writes the averaged gradients back, so backward() returns with
// gradients in sync, or throws the communication error as a ts::Error (code
// and message, naming the rank and the collective, kept).
//
// The first buckets follow reverse registration order, a guess at the order
// backward produces gradients. The first synchronized backward records the
// real order, and the next prepare_for_backward() plans the buckets again in
// rank 0's recorded order, once, as PyTorch's Reducer rebuilds its buckets:
// a model that registers a layer long before or after its use (a tied
// embedding, a shared head) would otherwise hold a bucket back until the end
// of backward.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "autograd/variable.h"
#include "collectives/communicator.h"
#include "collectives/ddp/bucket_plan.h"
#include "collectives/ddp/comm_wait_timer.h"

namespace ts::collectives::ddp {

// The largest bucket_cap_mb (1 TiB): megabytes become bytes in int64, which
// wraps past 8e12 MB (and inf made a bucket of every parameter).
inline constexpr int64_t kMaxBucketCapMb = int64_t{1} << 20;

struct ReducerOptions {
  // Each in (0, kMaxBucketCapMb].
  double bucket_cap_mb = 25;
  double first_bucket_cap_mb = 1;
  // Gradients travel in this floating dtype and are averaged back into the
  // parameters' dtype: f16 or bf16 compresses f32 gradients; f32 reduces
  // the f16/bf16 gradients of mixed precision at full precision. Buckets
  // already of this dtype, and every bucket when nullopt, travel as they are.
  std::optional<DType> wire_dtype;
};

// Counters since construction; `steps` counts synchronized backwards.
struct ReducerStats {
  int64_t steps = 0;
  int64_t allreduce_calls = 0;
  int64_t bytes_sent = 0;  // bytes allreduced (in the wire dtype)
};

class GradientReducer {
 public:
  using NamedParameter = std::pair<std::string, autograd::Variable>;

  // `comm` must outlive the reducer. Parameters that need no gradient are
  // left out.
  static absl::StatusOr<std::unique_ptr<GradientReducer>> create(std::vector<NamedParameter> parameters,
                                                                 Communicator* comm, ReducerOptions options = {});
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call before each forward whose backward should synchronize. Fails if the
  // previous backward reached only some parameters (they would desynchronize
  // the ranks' collectives), naming them.
  absl::Status prepare_for_backward();
  // A synchronized backward that prepare_for_backward() did not arm keeps its
  // gradients local, unless `check` (asked at each gradient of such a
  // backward) fails: then the backward stops, throwing the check's error.
  // DDP's fails in training mode, where the ranks would otherwise drift apart
  // without a word.
  void set_unprepared_backward_check(std::function<absl::Status()> check) {
    unprepared_backward_check_ = std::move(check);
  }
  // While false, backward accumulates gradients locally (no_sync); the next
  // synchronized backward averages the accumulated sums.
  void set_sync_enabled(bool enabled) { sync_enabled_ = enabled; }
  bool sync_enabled() const { return sync_enabled_; }

  // Fails if the backward since prepare_for_backward() left parameters
  // without a gradient, naming them: their buckets never went out, so every
  // gradient of this step is still this rank's own. Call it before the
  // optimizer step; prepare_for_backward() would say so only at the next
  // step, after the update it spoilt (or never, after a run's last step).
  absl::Status check_backward_complete() const;

  // The order the buckets are filled in once planned by the first
  // synchronized backward (rank 0's order of gradients; on another rank,
  // before the second step has planned by it, its own), nullopt before. A
  // checkpoint keeps it and a resumed run restores it with
  // plan_in_order(), so that the resumed steps reduce every gradient element
  // at the same place of the same bucket as the uninterrupted run: with
  // three or more ranks, where an element sits decides the order of its sum.
  std::optional<std::vector<int>> ready_order_plan() const;
  absl::Status plan_in_order(std::vector<int> fill_order);

  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  // The names of each bucket's parameters, buckets in launch order.
  std::vector<std::vector<std::string>> bucket_parameter_names() const;
  const ReducerStats& stats() const { return stats_; }
  // Time training stood still on communication at the ends of backward, so
  // far (on CUDA: waits for the device to pass the last step's end).
  absl::StatusOr<absl::Duration> wait_time() { return wait_timer_.total(); }

 private:
  struct Bucket {
    Tensor flat;      // gradients of the bucket's parameters, packed
    Tensor wire;      // what is sent: flat, or its copy in the wire dtype
    int pending = 0;  // parameters whose gradient has not arrived
    std::optional<Work> work;
  };

  GradientReducer(std::vector<NamedParameter> parameters, Communicator* comm, ReducerOptions options);
  // Plans the buckets with parameters filling them in `fill_order` (empty:
  // reverse registration order) and allocates their buffers.
  void plan(absl::Span<const int> fill_order);
  absl::Status replan_in_ready_order();
  // Parameters that got no gradient since prepare_for_backward(), after
  // some did (none at all means no backward ran), as an error naming them.
  absl::Status missing_gradients() const;
  absl::Status on_gradient_ready(int param);
  absl::Status launch_ready_buckets();
  absl::Status finish();

  std::vector<NamedParameter> parameters_;
  Communicator* comm_;
  ReducerOptions options_;
  std::vector<BucketSpec> specs_;
  std::vector<Bucket> buckets_;
  // For each parameter: its bucket and its offset there.
  std::vector<std::pair<int, int64_t>> location_;
  std::vector<int> hook_ids_;
  std::vector<bool> arrived_;
  // The order gradients arrived in, until the buckets are planned by it.
  std::vector<int> ready_order_;
  bool planned_by_ready_order_ = false;
  std::vector<int> fill_order_;  // the plan's, once planned by ready order
  int next_to_launch_ = 0;
  bool armed_ = false;
  bool sync_enabled_ = true;
  std::function<absl::Status()> unprepared_backward_check_;
  ReducerStats stats_;
  CommWaitTimer wait_timer_;
};

}  // namespace ts::collectives::ddp
