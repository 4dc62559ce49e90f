#include "collectives/ddp/distributed_data_parallel.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::collectives::ddp {
namespace {

// A fingerprint of the model's structure: state entries, total elements,
// trainable parameters, and a hash of every entry's name, shape and dtype
// and of which parameters train (the reducer buckets those alone, so ranks
// that freeze different ones would sum unrelated gradients).
constexpr int kSignatureValues = 4;

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
  int64_t trainable = 0;
  for (const auto& [name, p] : module.named_parameters()) {
    if (!p.requires_grad()) continue;
    ++trainable;
    mix(name);
  }
  return from_vector<int64_t>({static_cast<int64_t>(state.size()), total, trainable, static_cast<int64_t>(hash >> 1)},
                              {kSignatureValues});
}

// Tensors broadcast together: one dtype, packed end to end.
struct BroadcastBucket {
  std::vector<Tensor> tensors;
  int64_t bytes = 0;
};

// `tensors` in order of first appearance of their dtype, each dtype's cut
// into buckets of at most `cap` bytes (a larger tensor alone).
std::vector<BroadcastBucket> broadcast_buckets(const std::vector<Tensor>& tensors, int64_t cap) {
  std::vector<BroadcastBucket> buckets;
  std::map<DType, size_t> open;  // each dtype's bucket still filling
  for (const Tensor& t : tensors) {
    const int64_t bytes = t.numel() * t.itemsize();
    auto it = open.find(t.dtype());
    if (it == open.end() || buckets[it->second].bytes + bytes > cap) {
      buckets.emplace_back();
      it = open.insert_or_assign(t.dtype(), buckets.size() - 1).first;
    }
    buckets[it->second].tensors.push_back(t);
    buckets[it->second].bytes += bytes;
  }
  return buckets;
}

// Rank 0's values of `tensors`, in place on every rank: one broadcast per
// bucket, as PyTorch's _broadcast_coalesced, not one per tensor (ResNet-50's
// 159 batch-norm buffers are 2 collectives a step, not 159 launches with
// their events); a bucket of one tensor needs no packing.
absl::Status broadcast_from_rank0(Communicator& comm, const std::vector<Tensor>& tensors, int64_t bucket_bytes) {
  const std::vector<BroadcastBucket> buckets = broadcast_buckets(tensors, bucket_bytes);
  std::vector<Tensor> packed;
  std::vector<Work> works;
  for (const BroadcastBucket& b : buckets) {
    if (b.tensors.size() == 1) {
      packed.push_back(b.tensors[0]);
    } else if (comm.rank() == 0) {
      std::vector<Tensor> flat;
      for (const Tensor& t : b.tensors) flat.push_back(reshape(t, {t.numel()}));
      packed.push_back(cat(flat, 0));
    } else {
      // The broadcast overwrites it all.
      const Tensor& first = b.tensors[0];
      packed.push_back(empty({b.bytes / first.itemsize()}, {first.dtype(), first.device()}));
    }
    works.push_back(comm.broadcast(packed.back(), /*root=*/0));
  }
  for (Work& w : works) RETURN_IF_ERROR(w.wait());
  // Rank 0's tensors hold the values already.
  if (comm.rank() == 0) return absl::OkStatus();
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].tensors.size() == 1) continue;
    int64_t offset = 0;
    for (const Tensor& t : buckets[i].tensors) {
      copy_(t, packed[i].narrow(0, offset, t.numel()).view(t.shape()));
      offset += t.numel();
    }
  }
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
  const Tensor all = empty({comm.world_size() * kSignatureValues}, {DType::kI64, device});
  RETURN_IF_ERROR(comm.allgather(all, mine).synchronize());
  // Read on the host.
  const Tensor gathered = to(all, Device::cpu());
  const int64_t* s = gathered.data<int64_t>();
  for (int r = 1; r < comm.world_size(); ++r) {
    const int64_t* theirs = s + kSignatureValues * r;
    if (!std::equal(theirs, theirs + kSignatureValues, s)) {
      return absl::FailedPreconditionError(
          absl::StrCat("DDP: rank ", r, " holds a different model than rank 0 (", theirs[0], " state entries with ",
                       theirs[1], " elements, ", theirs[2], " of its parameters trainable, against ", s[0], " with ",
                       s[1], ", ", s[2], " trainable; or different names, shapes, dtypes or trainable parameters)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DistributedDataParallel>> DistributedDataParallel::create(
    std::shared_ptr<nn::Module> module, Communicator* comm, DdpOptions options) {
  if (options.broadcast_bucket_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DDP: broadcast_bucket_bytes = ", options.broadcast_bucket_bytes, " (must be positive)"));
  }
  const Device device = model_device(*module);
  RETURN_IF_ERROR(check_same_model(*comm, *module, device));
  std::vector<Tensor> state;
  for (const auto& [name, t] : module->state_dict()) state.push_back(t);
  RETURN_IF_ERROR(broadcast_from_rank0(*comm, state, options.broadcast_bucket_bytes));
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
  if (buffers_apart_ && options_.broadcast_buffers && comm_->world_size() > 1) {
    std::vector<Tensor> buffers;
    for (const auto& [name, t] : module_->named_buffers()) buffers.push_back(t);
    RETURN_IF_ERROR(broadcast_timer_.begin());
    const absl::Status broadcast = broadcast_from_rank0(*comm_, buffers, options_.broadcast_bucket_bytes);
    const absl::Status ended = broadcast_timer_.end();  // either way, as the reducer's waits
    RETURN_IF_ERROR(broadcast);
    RETURN_IF_ERROR(ended);
  }
  const bool synchronized = autograd::grad_enabled() && reducer_->sync_enabled();
  if (synchronized && module_->is_training()) {
    RETURN_IF_ERROR(reducer_->prepare_for_backward());
  }
  buffers_apart_ = synchronized;
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> DistributedDataParallel::communication_wait_time() {
  ASSIGN_OR_RETURN(const absl::Duration broadcasts, broadcast_timer_.total());
  ASSIGN_OR_RETURN(const absl::Duration gradients, reducer_->wait_time());
  return broadcasts + gradients;
}

}  // namespace ts::collectives::ddp
