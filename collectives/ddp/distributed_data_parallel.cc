#include "collectives/ddp/distributed_data_parallel.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::collectives::ddp {
namespace {

// A fingerprint of the model's structure: parameter count, total elements,
// and a hash of every name, shape and dtype.
Tensor model_signature(const nn::Module& module) {
  int64_t total = 0;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  auto mix = [&hash](absl::string_view bytes) {
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  };
  const nn::NamedTensors state = module.state_dict();
  for (const auto& [name, t] : state) {
    total += t.numel();
    mix(name);
    mix(shape_str(t.shape()));
    mix(dtype_name(t.dtype()));
  }
  return from_vector<int64_t>({static_cast<int64_t>(state.size()), total, static_cast<int64_t>(hash >> 1)}, {3});
}

// Rank 0's values of `tensors`, in place on every rank.
absl::Status broadcast_from_rank0(Communicator& comm, const std::vector<Tensor>& tensors) {
  std::vector<Work> works;
  works.reserve(tensors.size());
  for (const Tensor& t : tensors) works.push_back(comm.broadcast(t, /*root=*/0));
  for (Work& w : works) RETURN_IF_ERROR(w.wait());
  return absl::OkStatus();
}

// Where the replica lives (its first state entry; the CPU for a stateless
// module): the communicator's backend takes tensors on that device.
Device model_device(const nn::Module& module) {
  const nn::NamedTensors state = module.state_dict();
  return state.empty() ? Device::cpu() : state.begin()->second.device();
}

absl::Status check_same_model(Communicator& comm, const nn::Module& module, Device device) {
  const Tensor mine = to(model_signature(module), device);
  const Tensor all = empty({comm.world_size() * 3}, {DType::kI64, device});
  RETURN_IF_ERROR(comm.allgather(all, mine).wait());
  // Read on the host; the copy waits for the allgather.
  const Tensor gathered = to(all, Device::cpu());
  const int64_t* s = gathered.data<int64_t>();
  for (int r = 1; r < comm.world_size(); ++r) {
    if (s[3 * r] != s[0] || s[3 * r + 1] != s[1] || s[3 * r + 2] != s[2]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "DDP: rank ", r, " holds a different model than rank 0 (", s[3 * r], " state entries with ", s[3 * r + 1],
          " elements against ", s[0], " with ", s[1], ", or different names, shapes or dtypes)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DistributedDataParallel>> DistributedDataParallel::create(
    std::shared_ptr<nn::Module> module, Communicator* comm, DdpOptions options) {
  const Device device = model_device(*module);
  RETURN_IF_ERROR(check_same_model(*comm, *module, device));
  std::vector<Tensor> state;
  for (const auto& [name, t] : module->state_dict()) state.push_back(t);
  RETURN_IF_ERROR(broadcast_from_rank0(*comm, state));
  ASSIGN_OR_RETURN(std::unique_ptr<GradientReducer> reducer,
                   GradientReducer::create(module->named_parameters(), comm, options.reducer));
  return std::unique_ptr<DistributedDataParallel>(
      new DistributedDataParallel(std::move(module), comm, options, std::move(reducer), device));
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module, Communicator* comm,
                                                 DdpOptions options, std::unique_ptr<GradientReducer> reducer,
                                                 Device device)
    : module_(std::move(module)),
      comm_(comm),
      options_(options),
      reducer_(std::move(reducer)),
      broadcast_timer_(device) {
  // Evaluation-mode backwards (input gradients, say) are not steps, and stay
  // local as they always have.
  reducer_->set_unprepared_backward_check([this]() -> absl::Status {
    if (!module_->is_training()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("DistributedDataParallel: backward without begin_step() on rank ", comm_->rank(),
                     " (the module is training): call begin_step() before each training forward, or this "
                     "rank's gradients are not averaged with the other ranks' (no_sync() accumulates locally)"));
  });
}

absl::Status DistributedDataParallel::begin_step() {
  if (options_.broadcast_buffers && comm_->world_size() > 1) {
    std::vector<Tensor> buffers;
    for (const auto& [name, t] : module_->named_buffers()) buffers.push_back(t);
    RETURN_IF_ERROR(broadcast_timer_.begin());
    RETURN_IF_ERROR(broadcast_from_rank0(*comm_, buffers));
    RETURN_IF_ERROR(broadcast_timer_.end());
  }
  if (autograd::grad_enabled() && module_->is_training()) {
    RETURN_IF_ERROR(reducer_->prepare_for_backward());
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> DistributedDataParallel::communication_wait_time() {
  ASSIGN_OR_RETURN(const absl::Duration broadcasts, broadcast_timer_.total());
  ASSIGN_OR_RETURN(const absl::Duration gradients, reducer_->wait_time());
  return broadcasts + gradients;
}

}  // namespace ts::collectives::ddp
