#include "collectives/nccl/nccl_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "collectives/call_signature.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/nccl_check.h"
#include "tensor/ops.h"

namespace ts::collectives::nccl {

namespace {

constexpr auto kWatchdogPeriod = std::chrono::milliseconds(50);
// Finalizing waits until every rank's communicator is quiescent. A rank that
// leaves on an error while its peers wait in a collective would wait the
// whole collective timeout (10 minutes by default) before exiting; past
// this, it aborts instead, which frees the same resources.
constexpr absl::Duration kFinalizeTimeout = absl::Seconds(30);
// synchronize() spins this long before it sleeps between polls: a small
// collective ends in microseconds, and a sleep's granularity (50-100 us)
// would be all that comm_bench measures.
constexpr auto kSpinBeforeSleeping = std::chrono::milliseconds(1);

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kU8:
      return ncclUint8;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kF16:
      return ncclFloat16;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
  }
  return ncclUint8;
}

// A bool sum is a logical or: max of 0/1 bytes.
ncclRedOp_t nccl_op(ReduceOp op, DType d) {
  if (op == ReduceOp::kMax || d == DType::kBool) return ncclMax;
  return op == ReduceOp::kAvg ? ncclAvg : ncclSum;
}

bool in_progress_or_ok(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

}  // namespace

// One enqueued operation, watched until its end event completes.
struct NcclCommunicator::Pending {
  std::string description;
  cuda::Event done;
  absl::Time start;
  std::vector<Tensor> tensors;  // alive until the device is done with them
  bool finished = false;
};

// The first failure of a communicator; later calls and Works fail with it.
class NcclCommunicator::FirstFailure {
 public:
  absl::Status get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  void record(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(status);
  }

 private:
  mutable std::mutex mu_;
  absl::Status status_;
};

// Holds what it reads (the device, the failure, the end event) itself, not
// the communicator: a Work may be waited on after its communicator is gone.
// Destruction finalizes the communicator, which completes its operations;
// an abort records why, which the Work then reports.
class NcclCommunicator::NcclWork final : public Work::Impl {
 public:
  NcclWork(int device, std::shared_ptr<const FirstFailure> failure, std::shared_ptr<Pending> pending)
      : device_(device), failure_(std::move(failure)), pending_(std::move(pending)) {}
  absl::Status wait() override {
    RETURN_IF_ERROR(failure_->get());
    // The legacy default stream is per device: order the communicator's
    // device's stream, whichever device this thread is on.
    cuda::DeviceGuard guard(device_);
    return pending_->done.block(cuda::current_stream(device_));
  }
  absl::Status synchronize() override {
    const auto start = std::chrono::steady_clock::now();
    while (true) {
      RETURN_IF_ERROR(failure_->get());
      ASSIGN_OR_RETURN(const bool done, pending_->done.query());
      if (done) return failure_->get();
      if (std::chrono::steady_clock::now() - start < kSpinBeforeSleeping) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  // A failed query counts as completed: wait() or synchronize() then reports
  // the error.
  bool is_completed() override {
    absl::StatusOr<bool> done = pending_->done.query();
    return !done.ok() || *done || !failure_->get().ok();
  }

 private:
  int device_;
  std::shared_ptr<const FirstFailure> failure_;
  std::shared_ptr<Pending> pending_;
};

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(const LaunchEnvironment& env, int device,
                                                                           const IdBroadcast& broadcast_id,
                                                                           CommunicatorOptions options) {
  RETURN_IF_ERROR(cuda::check_device(device));
  cuda::DeviceGuard guard(device);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (env.rank == 0) RETURN_IF_CUDA_ERROR(ncclGetUniqueId(&id));
  ASSIGN_OR_RETURN(std::string shared, broadcast_id(std::string(reinterpret_cast<char*>(&id), sizeof(id))));
  if (shared.size() != sizeof(id)) {
    return absl::InternalError(
        absl::StrCat("nccl: received an ncclUniqueId of ", shared.size(), " bytes, not ", sizeof(id)));
  }
  std::memcpy(&id, shared.data(), sizeof(id));

  // Nonblocking initialization, so a rank that never joins is a timeout.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  // Until the communicator is handed over, every way out aborts it: a failed
  // init may have allocated it, and a started one runs on in the background.
  auto abort_comm = absl::MakeCleanup([&comm] {
    if (comm != nullptr) ncclCommAbort(comm);
  });
  const ncclResult_t init = ncclCommInitRankConfig(&comm, env.world_size, id, env.rank, &config);
  if (!in_progress_or_ok(init)) RETURN_IF_CUDA_ERROR(init);
  ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::create(device));
  std::unique_ptr<NcclCommunicator> out(new NcclCommunicator(options, device, std::move(stream), comm, env.rank,
                                                             env.world_size, env.local_rank, env.local_size));
  std::move(abort_comm).Cancel();
  RETURN_IF_ERROR(out->wait_ready(absl::StrCat("ncclCommInitRankConfig on rank ", env.rank, " of ", env.world_size)));
  out->barrier_scratch_ = zeros({1}, {DType::kI32, Device::cuda(device)});
  return out;
}

NcclCommunicator::NcclCommunicator(CommunicatorOptions options, int device, cuda::Stream stream, ncclComm_t comm,
                                   int rank, int world_size, int local_rank, int local_size)
    : options_(options),
      device_(device),
      stream_(std::move(stream)),
      comm_(comm),
      rank_(rank),
      world_size_(world_size),
      local_rank_(local_rank),
      local_size_(local_size),
      failure_(std::make_shared<FirstFailure>()),
      watchdog_([this] {
        // No exception may leave the thread (that would terminate the
        // process). One from the loop is a bug: failing the communicator
        // with it hands it to every waiter, who would otherwise go unwatched.
        if (const absl::Status s = ts::capture([this] { watchdog(); }); !s.ok()) {
          fail_and_abort(absl::Status(
              s.code(), absl::StrCat("NCCL watchdog on rank ", rank_, " of ", world_size_, " failed: ", s.message())));
        }
      }) {}

NcclCommunicator::~NcclCommunicator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  watchdog_.join();
  cuda::DeviceGuard guard(device_);
  if (aborted_) return;
  // Finalize flushes outstanding work (nonblocking: it returns
  // ncclInProgress, and wait_ready bounds the wait); abort if it fails.
  const absl::StatusOr<ncclResult_t> finalize = call_nccl([this] { return ncclCommFinalize(comm_); });
  if (finalize.ok() && in_progress_or_ok(*finalize) &&
      wait_ready("ncclCommFinalize", std::min(options_.timeout, kFinalizeTimeout)).ok()) {
    ncclCommDestroy(comm_);
    return;
  }
  fail_and_abort(absl::UnavailableError(absl::StrCat(
      "ncclCommFinalize: ", finalize.ok() ? cuda::describe_error(*finalize) : finalize.status().ToString())));
}

absl::Status NcclCommunicator::broken() const { return failure_->get(); }

absl::StatusOr<ncclResult_t> NcclCommunicator::call_nccl(const std::function<ncclResult_t()>& call) {
  std::lock_guard<std::mutex> comm_lock(comm_mu_);
  RETURN_IF_ERROR(broken());
  return call();
}

absl::Status NcclCommunicator::wait_ready(absl::string_view what) { return wait_ready(what, options_.timeout); }

absl::Status NcclCommunicator::wait_ready(absl::string_view what, absl::Duration timeout) {
  const absl::Time start = absl::Now();
  while (true) {
    ncclResult_t state = ncclSuccess;
    ASSIGN_OR_RETURN(const ncclResult_t query, call_nccl([&] { return ncclCommGetAsyncError(comm_, &state); }));
    if (query != ncclSuccess) state = query;
    if (state == ncclSuccess) return absl::OkStatus();
    if (state != ncclInProgress) {
      fail_and_abort(absl::UnavailableError(absl::StrCat(what, ": ", cuda::describe_error(state))));
      return broken();
    }
    if (absl::Now() - start > timeout) {
      fail_and_abort(absl::DeadlineExceededError(absl::StrCat(
          what, " timed out after ", absl::FormatDuration(absl::Now() - start), ": a rank did not join or hangs")));
      return broken();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void NcclCommunicator::fail_and_abort(absl::Status status) {
  failure_->record(std::move(status));
  // The failure is recorded, so no new call on comm_ starts; comm_mu_ waits
  // out the one in progress. No other lock is held: the abort may take a
  // while, and waiters must see the failure meanwhile.
  std::lock_guard<std::mutex> comm_lock(comm_mu_);
  if (aborted_) return;
  aborted_ = true;
  // Unblocks any kernel of this communicator still waiting on a peer.
  ncclCommAbort(comm_);
}

void NcclCommunicator::watchdog() {
  // Event queries and NCCL's calls from this thread run on the
  // communicator's device (no context on another one).
  cuda::DeviceGuard guard(device_);
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      stop_cv_.wait_for(lock, kWatchdogPeriod);
      if (stopping_) return;
    }
    if (!broken().ok()) continue;
    ncclResult_t state = ncclSuccess;
    const absl::StatusOr<ncclResult_t> query = call_nccl([&] { return ncclCommGetAsyncError(comm_, &state); });
    if (query.ok() && *query == ncclSuccess && !in_progress_or_ok(state)) {
      fail_and_abort(absl::UnavailableError(absl::StrCat("nccl communicator on rank ", rank_, " of ", world_size_,
                                                         " failed asynchronously: ", cuda::describe_error(state),
                                                         " (a peer rank failed or exited)")));
      continue;
    }
    absl::Status timed_out;
    // Entries leave pending_ under mu_ but are destroyed after the abort,
    // outside it: dropping the last reference to a tensor frees it through
    // the caching allocator, whose lock a thread may hold while it
    // synchronizes the device, which waits for the kernel only the abort
    // can end.
    std::vector<std::shared_ptr<Pending>> retired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::shared_ptr<Pending>& p : pending_) {
        absl::StatusOr<bool> done = p->done.query();
        if (!done.ok() || *done) {
          p->finished = true;
          continue;
        }
        const absl::Duration elapsed = absl::Now() - p->start;
        if (elapsed > options_.timeout) {
          timed_out = absl::DeadlineExceededError(absl::StrCat(
              p->description, " timed out after ", absl::FormatDuration(elapsed),
              " (NCCL watchdog): a peer rank exited, hangs, or called a different collective; the communicator "
              "was aborted"));
          break;
        }
      }
      const auto kept = std::stable_partition(pending_.begin(), pending_.end(), [&](const std::shared_ptr<Pending>& p) {
        return !p->finished && timed_out.ok();
      });
      retired.assign(std::make_move_iterator(kept), std::make_move_iterator(pending_.end()));
      pending_.erase(kept, pending_.end());
    }
    if (!timed_out.ok()) fail_and_abort(std::move(timed_out));
    retired.clear();
  }
}

Work NcclCommunicator::collective(absl::string_view op, const Tensor& signature_tensor, std::vector<Tensor> tensors,
                                  const std::function<ncclResult_t(cudaStream_t)>& enqueue) {
  const int64_t sequence = sequence_++;
  // Also at world size 1 (nothing can differ), so one GPU runs the check.
  if (options_.debug) {
    if (absl::Status s = check_signatures(make_call_signature(sequence, op, signature_tensor)); !s.ok()) {
      return Work::failed(s);
    }
  }
  return launch(describe_call(op, sequence, signature_tensor, rank_, world_size_), std::move(tensors), enqueue);
}

absl::Status NcclCommunicator::check_signatures(const CallSignature& mine) {
  constexpr int64_t kBytes = sizeof(CallSignature);
  const Tensor own_on_host = Tensor::allocate({kBytes}, DType::kU8, Device::cpu());
  std::memcpy(own_on_host.raw_data(), &mine, kBytes);
  const Tensor own = to(own_on_host, Device::cuda(device_));
  const Tensor all = empty({world_size_ * kBytes}, {DType::kU8, Device::cuda(device_)});
  // Through launch, so the watchdog bounds it like any collective: a rank
  // that never calls anything is a timeout here too.
  Work gather = launch(absl::StrCat("debug signature check before ", describe_call_signature(mine), " on rank ", rank_,
                                    " of ", world_size_),
                       {all, own}, [&](cudaStream_t s) {
                         return ncclAllGather(own.raw_data(), all.raw_data(), kBytes, ncclUint8, comm_, s);
                       });
  // Done on the device once synchronize() returns, so the copy needs no
  // stream ordering.
  RETURN_IF_ERROR(gather.synchronize());
  const Tensor all_on_host = to(all, Device::cpu());
  std::vector<CallSignature> signatures(world_size_);
  std::memcpy(signatures.data(), all_on_host.raw_data(), world_size_ * kBytes);
  return check_call_signatures(signatures, rank_);
}

Work NcclCommunicator::launch(std::string description, std::vector<Tensor> tensors,
                              const std::function<ncclResult_t(cudaStream_t)>& enqueue) {
  cuda::DeviceGuard guard(device_);
  const cudaStream_t caller = cuda::current_stream(device_);
  absl::StatusOr<cuda::Event> ready = cuda::Event::create();
  if (!ready.ok()) return Work::failed(ready.status());
  if (absl::Status s = ready->record(caller); !s.ok()) return Work::failed(s);
  if (absl::Status s = ready->block(stream_.get()); !s.ok()) return Work::failed(s);
  // Nonblocking NCCL calls return without waiting on peers, so holding
  // comm_mu_ (which keeps an abort from freeing comm_ meanwhile) is brief.
  const absl::StatusOr<ncclResult_t> enqueued = call_nccl([&] { return enqueue(stream_.get()); });
  if (!enqueued.ok()) {
    const absl::Status& s = enqueued.status();
    return Work::failed(absl::Status(
        s.code(), absl::StrCat(description, ": the communicator was aborted after an earlier failure: ", s.message())));
  }
  const ncclResult_t r = *enqueued;
  if (!in_progress_or_ok(r)) {
    return Work::failed(
        absl::Status(cuda::status_code_of(r), absl::StrCat(description, ": ", cuda::describe_error(r))));
  }
  // The caching allocator must not hand this memory to the caller's stream
  // until the NCCL stream is done with it: recorded before anything can
  // return, since the kernels may be queued even when the wait below fails.
  for (const Tensor& t : tensors) {
    if (t.numel() > 0) cuda::caching_allocator(device_).record_stream(t.storage()->data(), stream_.get());
  }
  if (absl::Status s = wait_ready(description); !s.ok()) return Work::failed(s);
  absl::StatusOr<cuda::Event> done = cuda::Event::create();
  if (!done.ok()) return Work::failed(done.status());
  if (absl::Status s = done->record(stream_.get()); !s.ok()) return Work::failed(s);
  auto pending = std::make_shared<Pending>(
      Pending{std::move(description), *std::move(done), absl::Now(), std::move(tensors), false});
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(pending);
  }
  return Work(std::make_shared<NcclWork>(device_, failure_, std::move(pending)));
}

Work NcclCommunicator::allreduce(const Tensor& tensor, ReduceOp op) {
  const std::string name = absl::StrCat("allreduce(", reduce_op_name(op), ")");
  if (absl::Status s = check_tensor(name, tensor, Device::cuda(device_)); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_reduce_dtype(name, tensor, op); !s.ok()) return Work::failed(s);
  return collective(name, tensor, {tensor}, [&](cudaStream_t s) {
    return ncclAllReduce(tensor.raw_data(), tensor.raw_data(), tensor.numel(), nccl_type(tensor.dtype()),
                         nccl_op(op, tensor.dtype()), comm_, s);
  });
}

Work NcclCommunicator::broadcast(const Tensor& tensor, int root) {
  const std::string name = absl::StrCat("broadcast(root ", root, ")");
  if (absl::Status s = check_tensor(name, tensor, Device::cuda(device_)); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_peer(name, root, world_size_, "root"); !s.ok()) return Work::failed(s);
  return collective(name, tensor, {tensor}, [&](cudaStream_t s) {
    return ncclBroadcast(tensor.raw_data(), tensor.raw_data(), tensor.numel(), nccl_type(tensor.dtype()), root, comm_,
                         s);
  });
}

Work NcclCommunicator::allgather(const Tensor& output, const Tensor& input) {
  constexpr absl::string_view kName = "allgather";
  for (const Tensor* t : {&output, &input}) {
    if (absl::Status s = check_tensor(kName, *t, Device::cuda(device_)); !s.ok()) return Work::failed(s);
  }
  if (absl::Status s = check_gathered(kName, output, input, world_size_); !s.ok()) return Work::failed(s);
  return collective(kName, input, {output, input}, [&](cudaStream_t s) {
    return ncclAllGather(input.raw_data(), output.raw_data(), input.numel(), nccl_type(input.dtype()), comm_, s);
  });
}

Work NcclCommunicator::reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) {
  const std::string name = absl::StrCat("reduce_scatter(", reduce_op_name(op), ")");
  for (const Tensor* t : {&output, &input}) {
    if (absl::Status s = check_tensor(name, *t, Device::cuda(device_)); !s.ok()) return Work::failed(s);
  }
  if (absl::Status s = check_reduce_dtype(name, input, op); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_gathered(name, input, output, world_size_); !s.ok()) return Work::failed(s);
  return collective(name, input, {output, input}, [&](cudaStream_t s) {
    return ncclReduceScatter(input.raw_data(), output.raw_data(), output.numel(), nccl_type(input.dtype()),
                             nccl_op(op, input.dtype()), comm_, s);
  });
}

Work NcclCommunicator::exchange(absl::Span<const PeerTransfer> transfers) {
  std::vector<std::string> parts;
  std::vector<Tensor> tensors;
  for (const PeerTransfer& t : transfers) {
    const bool send = t.kind == PeerTransfer::Kind::kSend;
    const char* name = send ? "send" : "recv";
    if (absl::Status s = check_tensor(name, t.tensor, Device::cuda(device_)); !s.ok()) return Work::failed(s);
    if (absl::Status s = check_peer(name, t.peer, world_size_, send ? "destination" : "source"); !s.ok()) {
      return Work::failed(s);
    }
    parts.push_back(absl::StrCat(name, " ", t.tensor.describe(), send ? " to rank " : " from rank ", t.peer));
    tensors.push_back(t.tensor);
  }
  const std::string description =
      absl::StrCat("exchange (", absl::StrJoin(parts, ", "), ") on rank ", rank_, " of ", world_size_);
  // One group, so sends and receives between a pair cannot deadlock.
  return launch(description, std::move(tensors), [&](cudaStream_t s) {
    ncclResult_t r = ncclGroupStart();
    for (const PeerTransfer& t : transfers) {
      if (!in_progress_or_ok(r)) break;
      r = t.kind == PeerTransfer::Kind::kSend
              ? ncclSend(t.tensor.raw_data(), t.tensor.numel(), nccl_type(t.tensor.dtype()), t.peer, comm_, s)
              : ncclRecv(t.tensor.raw_data(), t.tensor.numel(), nccl_type(t.tensor.dtype()), t.peer, comm_, s);
    }
    const ncclResult_t end = ncclGroupEnd();
    return in_progress_or_ok(r) ? end : r;
  });
}

Work NcclCommunicator::barrier() {
  return collective("barrier", Tensor(), {barrier_scratch_}, [&](cudaStream_t s) {
    return ncclAllReduce(barrier_scratch_.raw_data(), barrier_scratch_.raw_data(), 1, ncclInt32, ncclSum, comm_, s);
  });
}

absl::StatusOr<std::unique_ptr<Communicator>> NcclCommunicator::split(int color, int key) {
  ASSIGN_OR_RETURN(const std::vector<double> gathered,
                   allgather_values(*this, Device::cuda(device_), {static_cast<double>(color)}));
  RETURN_IF_ERROR(check_split_colors(std::vector<int>(gathered.begin(), gathered.end())));
  cuda::DeviceGuard guard(device_);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t out = nullptr;
  // Until the child communicator is handed over, every way out aborts it.
  auto abort_child = absl::MakeCleanup([&out] {
    if (out != nullptr) ncclCommAbort(out);
  });
  ASSIGN_OR_RETURN(const ncclResult_t r, call_nccl([&] { return ncclCommSplit(comm_, color, key, &out, &config); }));
  if (!in_progress_or_ok(r)) RETURN_IF_CUDA_ERROR(r);
  RETURN_IF_ERROR(wait_ready(absl::StrCat("ncclCommSplit on rank ", rank_)));
  int rank = 0;
  int size = 0;
  // The child is ready once its own async state leaves ncclInProgress.
  const absl::Time deadline = absl::Now() + options_.timeout;
  for (ncclResult_t state = ncclInProgress; state == ncclInProgress;) {
    RETURN_IF_CUDA_ERROR(ncclCommGetAsyncError(out, &state));
    if (!in_progress_or_ok(state)) RETURN_IF_CUDA_ERROR(state);
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("ncclCommSplit on rank ", rank_, " timed out"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  RETURN_IF_CUDA_ERROR(ncclCommUserRank(out, &rank));
  RETURN_IF_CUDA_ERROR(ncclCommCount(out, &size));
  ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::create(device_));
  // Ranks of a machine are contiguous under our launcher; a sub-communicator
  // keeps the parent's machine grouping only when it lies within one machine.
  const bool one_machine = local_size_ == world_size_;
  std::unique_ptr<NcclCommunicator> child(new NcclCommunicator(options_, device_, std::move(stream), out, rank, size,
                                                               one_machine ? rank : 0, one_machine ? size : 1));
  std::move(abort_child).Cancel();
  child->barrier_scratch_ = zeros({1}, {DType::kI32, Device::cuda(device_)});
  return std::unique_ptr<Communicator>(std::move(child));
}

NcclCommunicator::IdBroadcast mpi_id_broadcast(Communicator& cpu_comm) {
  return [&cpu_comm](const std::string& id) -> absl::StatusOr<std::string> {
    const Tensor bytes = Tensor::allocate({static_cast<int64_t>(sizeof(ncclUniqueId))}, DType::kU8, Device::cpu());
    if (cpu_comm.rank() == 0) std::memcpy(bytes.raw_data(), id.data(), sizeof(ncclUniqueId));
    RETURN_IF_ERROR(cpu_comm.broadcast(bytes, 0).wait());
    return std::string(static_cast<char*>(bytes.raw_data()), sizeof(ncclUniqueId));
  };
}

}  // namespace ts::collectives::nccl
