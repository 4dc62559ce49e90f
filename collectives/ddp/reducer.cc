#include "collectives/ddp/reducer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::collectives::ddp {
namespace {

int64_t megabytes_to_bytes(double mb) { return static_cast<int64_t>(std::llround(mb * (1 << 20))); }

}  // namespace

absl::StatusOr<std::unique_ptr<GradientReducer>> GradientReducer::create(std::vector<NamedParameter> parameters,
                                                                         Communicator* comm, ReducerOptions options) {
  const auto in_range = [](double mb) { return mb > 0 && mb <= static_cast<double>(kMaxBucketCapMb); };
  if (!in_range(options.bucket_cap_mb) || !in_range(options.first_bucket_cap_mb)) {
    return absl::InvalidArgumentError(absl::StrCat("DDP: bucket_cap_mb (", options.bucket_cap_mb,
                                                   ") and first_bucket_cap_mb (", options.first_bucket_cap_mb,
                                                   ") must be in (0, ", kMaxBucketCapMb, "]"));
  }
  if (options.wire_dtype && !is_floating(*options.wire_dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("DDP: gradients cannot travel as ", dtype_name(*options.wire_dtype),
                                                   " (wire_dtype): it must be floating-point"));
  }
  std::vector<NamedParameter> trainable;
  for (auto& named : parameters) {
    if (named.second.requires_grad()) trainable.push_back(std::move(named));
  }
  std::unique_ptr<GradientReducer> reducer(new GradientReducer(std::move(trainable), comm, options));
  reducer->plan({});
  return reducer;
}

GradientReducer::GradientReducer(std::vector<NamedParameter> parameters, Communicator* comm, ReducerOptions options)
    : parameters_(std::move(parameters)),
      comm_(comm),
      options_(options),
      location_(parameters_.size()),
      arrived_(parameters_.size(), false),
      // The replica lives on one device; with no trainable parameter there
      // is nothing to wait for and the CPU clock is as good as any.
      wait_timer_(parameters_.empty() ? Device::cpu() : parameters_.front().second.device()) {
  // A failed collective stops the backward: the hook throws its Status.
  for (size_t i = 0; i < parameters_.size(); ++i) {
    hook_ids_.push_back(parameters_[i].second.add_grad_ready_hook(
        [this, i](const autograd::Variable&) { throw_if_error(on_gradient_ready(static_cast<int>(i))); }));
  }
}

void GradientReducer::plan(absl::Span<const int> fill_order) {
  std::vector<ParamInfo> infos;
  for (const auto& [name, p] : parameters_) infos.push_back({p.numel(), p.dtype(), p.device()});
  specs_ = plan_buckets(infos,
                        {megabytes_to_bytes(options_.first_bucket_cap_mb), megabytes_to_bytes(options_.bucket_cap_mb)},
                        fill_order);
  buckets_ = std::vector<Bucket>(specs_.size());
  for (size_t b = 0; b < specs_.size(); ++b) {
    const BucketSpec& spec = specs_[b];
    Bucket& bucket = buckets_[b];
    bucket.flat = empty({spec.numel}, {spec.dtype, spec.device});
    bucket.wire = options_.wire_dtype && *options_.wire_dtype != spec.dtype
                      ? empty({spec.numel}, {*options_.wire_dtype, spec.device})
                      : bucket.flat;
    for (size_t k = 0; k < spec.params.size(); ++k) {
      location_[spec.params[k]] = {static_cast<int>(b), spec.offsets[k]};
    }
  }
}

absl::Status GradientReducer::replan_in_ready_order() {
  // Rank 0's order, so that every rank's buckets hold the same parameters
  // even if their backwards finished them in different orders.
  std::vector<int64_t> order(ready_order_.begin(), ready_order_.end());
  if (comm_->world_size() > 1) {
    const Device device = parameters_.front().second.device();
    ASSIGN_OR_RETURN(const Tensor shared, capture([&] {
                       return from_vector<int64_t>(order, {static_cast<int64_t>(order.size())}, device);
                     }));
    RETURN_IF_ERROR(comm_->broadcast(shared, /*root=*/0).synchronize());
    ASSIGN_OR_RETURN(order, capture([&] { return to_vector<int64_t>(shared); }));
  }
  std::vector<int> fill_order;
  for (const int64_t i : order) {
    if (i < 0 || i >= static_cast<int64_t>(parameters_.size())) {
      return absl::FailedPreconditionError(absl::StrCat("DDP on rank ", comm_->rank(), ": rank 0's order of gradients ",
                                                        "names parameter ", i, " of ", parameters_.size(),
                                                        "; the ranks' models differ"));
    }
    fill_order.push_back(static_cast<int>(i));
  }
  return plan_in_order(std::move(fill_order));
}

absl::Status GradientReducer::plan_in_order(std::vector<int> fill_order) {
  std::vector<bool> seen(parameters_.size(), false);
  for (const int i : fill_order) {
    if (i < 0 || i >= static_cast<int>(seen.size()) || seen[i]) {
      return absl::FailedPreconditionError(absl::StrCat("DDP on rank ", comm_->rank(), ": the order of ",
                                                        fill_order.size(),
                                                        " gradients to plan the buckets by names parameter ", i, " of ",
                                                        seen.size(), " out of place; it is not this model's"));
    }
    seen[i] = true;
  }
  if (fill_order.size() != parameters_.size()) {
    return absl::FailedPreconditionError(absl::StrCat("DDP on rank ", comm_->rank(), ": an order of ",
                                                      fill_order.size(), " gradients for ", parameters_.size(),
                                                      " trainable parameters; it is not this model's"));
  }
  planned_by_ready_order_ = true;
  fill_order_ = std::move(fill_order);
  std::vector<int> current;
  for (const BucketSpec& spec : specs_) current.insert(current.end(), spec.params.begin(), spec.params.end());
  if (fill_order_ != current) plan(fill_order_);
  return absl::OkStatus();
}

std::optional<std::vector<int>> GradientReducer::ready_order_plan() const {
  if (planned_by_ready_order_) return fill_order_;
  // After the first synchronized backward and before the next step plans
  // by it: the order this rank saw, which is the plan on rank 0, the rank
  // whose order every rank takes (and that writes checkpoints).
  if (!parameters_.empty() && ready_order_.size() == parameters_.size()) return ready_order_;
  return std::nullopt;
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    parameters_[i].second.remove_grad_ready_hook(hook_ids_[i]);
  }
}

absl::Status GradientReducer::missing_gradients() const {
  std::vector<std::string> missing;
  bool any_arrived = false;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (arrived_[i]) {
      any_arrived = true;
    } else {
      missing.push_back(parameters_[i].first);
    }
  }
  if (!any_arrived || missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("DDP on rank ", comm_->rank(), ": the backward produced no gradient for ", missing.size(),
                   " parameter(s): ", absl::StrJoin(missing, ", "),
                   ". Every parameter must take part in the loss, or the ranks' allreduces go out of "
                   "step; remove unused parameters from the model"));
}

absl::Status GradientReducer::check_backward_complete() const {
  if (!armed_ || !sync_enabled_) return absl::OkStatus();
  return missing_gradients();
}

absl::Status GradientReducer::prepare_for_backward() {
  if (armed_) RETURN_IF_ERROR(missing_gradients());
  if (!planned_by_ready_order_ && !parameters_.empty() && ready_order_.size() == parameters_.size()) {
    RETURN_IF_ERROR(replan_in_ready_order());
  }
  ready_order_.clear();
  std::fill(arrived_.begin(), arrived_.end(), false);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].pending = static_cast<int>(specs_[b].params.size());
    buckets_[b].work.reset();
  }
  next_to_launch_ = 0;
  armed_ = true;
  return absl::OkStatus();
}

std::vector<std::vector<std::string>> GradientReducer::bucket_parameter_names() const {
  std::vector<std::vector<std::string>> names;
  for (const BucketSpec& spec : specs_) {
    names.emplace_back();
    for (const int p : spec.params) names.back().push_back(parameters_[p].first);
  }
  return names;
}

absl::Status GradientReducer::on_gradient_ready(int param) {
  if (!sync_enabled_) return absl::OkStatus();
  if (!armed_) return unprepared_backward_check_ ? unprepared_backward_check_() : absl::OkStatus();
  if (arrived_[param]) {
    return absl::FailedPreconditionError(
        absl::StrCat("DDP on rank ", comm_->rank(), ": parameter ", parameters_[param].first,
                     " got a second gradient before prepare_for_backward(); call it (DDP's begin_step() does) "
                     "before every synchronized backward"));
  }
  arrived_[param] = true;
  if (!planned_by_ready_order_) ready_order_.push_back(param);
  const auto [b, offset] = location_[param];
  Bucket& bucket = buckets_[b];
  const Tensor& grad = parameters_[param].second.grad();
  copy_(bucket.flat.narrow(0, offset, grad.numel()), grad.view({grad.numel()}));
  --bucket.pending;
  RETURN_IF_ERROR(launch_ready_buckets());
  // Backends that progress only when polled (MPI) move the launched buckets
  // along while backward computes the next gradients.
  for (int b = 0; b < next_to_launch_ && armed_; ++b) buckets_[b].work->is_completed();
  return absl::OkStatus();
}

absl::Status GradientReducer::launch_ready_buckets() {
  // Buckets go out in plan order on every rank, whatever order they fill in,
  // so the ranks' collectives match.
  while (next_to_launch_ < num_buckets() && buckets_[next_to_launch_].pending == 0) {
    Bucket& bucket = buckets_[next_to_launch_];
    if (!bucket.wire.shares_storage_with(bucket.flat)) copy_(bucket.wire, bucket.flat);
    bucket.work = comm_->allreduce(bucket.wire, ReduceOp::kAvg);
    ++stats_.allreduce_calls;
    stats_.bytes_sent += bucket.wire.numel() * bucket.wire.itemsize();
    ++next_to_launch_;
  }
  if (next_to_launch_ == num_buckets()) return finish();
  return absl::OkStatus();
}

absl::Status GradientReducer::finish() {
  RETURN_IF_ERROR(wait_timer_.begin());
  absl::Status waited = absl::OkStatus();
  for (Bucket& bucket : buckets_) {
    waited = bucket.work->wait();
    if (!waited.ok()) break;
  }
  // Ended either way: a begin() without its end() would fail every later
  // reading of the total (the report's), hiding the wait's own error,
  // which comes first.
  const absl::Status ended = wait_timer_.end();
  RETURN_IF_ERROR(waited);
  RETURN_IF_ERROR(ended);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    if (!bucket.wire.shares_storage_with(bucket.flat)) copy_(bucket.flat, bucket.wire);
    for (size_t k = 0; k < specs_[b].params.size(); ++k) {
      const Tensor& grad = parameters_[specs_[b].params[k]].second.grad();
      copy_(grad.view({grad.numel()}), bucket.flat.narrow(0, specs_[b].offsets[k], grad.numel()));
    }
  }
  ++stats_.steps;
  armed_ = false;
  return absl::OkStatus();
}

}  // namespace ts::collectives::ddp
