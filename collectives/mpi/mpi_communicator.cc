#include "collectives/mpi/mpi_communicator.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/mpi/debug_check.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/mpi/reduce_kernels.h"
#include "collectives/mpi/schedules.h"

namespace ts::collectives::mpi {

namespace {

char* bytes_of(const Tensor& t) { return static_cast<char*>(t.raw_data()); }
int64_t nbytes(const Tensor& t) { return t.numel() * t.itemsize(); }
bool is_power_of_two(int n) { return (n & (n - 1)) == 0; }

// Polls one request of the setup phase (before an engine exists) against a
// deadline.
absl::Status wait_setup(MPI_Request& request, absl::Time deadline, absl::string_view what) {
  const absl::Time start = absl::Now();
  for (int polls = 0;; ++polls) {
    int done = 0;
    RETURN_IF_ERROR(check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what));
    if (done) return absl::OkStatus();
    if (absl::Now() > deadline) {
      mark_failed();
      return absl::DeadlineExceededError(
          absl::StrCat(what, " timed out after ", absl::FormatDuration(absl::Now() - start),
                       ": not every rank created the communicator (a rank exited, hangs, or was not started)"));
    }
    if (polls > 2000) std::this_thread::yield();
  }
}

absl::StatusOr<MPI_Comm> dup(MPI_Comm comm, absl::Time deadline) {
  MPI_Comm out;
  MPI_Request request;
  RETURN_IF_ERROR(check(MPI_Comm_idup(comm, &out, &request), "MPI_Comm_idup"));
  RETURN_IF_ERROR(wait_setup(request, deadline, "MPI_Comm_idup (communicator creation)"));
  return out;
}

// Per rank of `base`: the shared-memory eager limit for the ranks in `local`
// (this machine's), 0 (send whole) for the others.
absl::StatusOr<std::vector<int64_t>> eager_bytes_by_peer(MPI_Comm base, MPI_Comm local) {
  int size = 0, local_size = 0;
  MPI_Comm_size(base, &size);
  MPI_Comm_size(local, &local_size);
  MPI_Group base_group, local_group;
  RETURN_IF_ERROR(check(MPI_Comm_group(base, &base_group), "MPI_Comm_group"));
  RETURN_IF_ERROR(check(MPI_Comm_group(local, &local_group), "MPI_Comm_group"));
  std::vector<int> local_ranks(local_size), base_ranks(local_size);
  std::iota(local_ranks.begin(), local_ranks.end(), 0);
  const absl::Status translated =
      check(MPI_Group_translate_ranks(local_group, local_size, local_ranks.data(), base_group, base_ranks.data()),
            "MPI_Group_translate_ranks");
  MPI_Group_free(&local_group);
  MPI_Group_free(&base_group);
  RETURN_IF_ERROR(translated);
  std::vector<int64_t> bytes(size, 0);
  for (int r : base_ranks) bytes[r] = shared_memory_eager_bytes();
  return bytes;
}

// Posts nothing; `then` does local work after the previous round.
Round local_round(std::function<absl::Status()> then) {
  return Round{[](std::vector<MPI_Request>&) { return absl::OkStatus(); }, std::move(then), {}};
}

// An average is each rank's share summed, as NCCL's avg (a pre-multiplied
// sum) and PyTorch's DDP (gradients divided as they enter the bucket) take
// it: a 16-bit sum of whole values overflows where the average fits (two
// f16 gradients of 40000 under a loss scale).
Round prescale_round(char* data, int64_t numel, DType dtype, int world_size) {
  return local_round([data, numel, dtype, world_size] {
    scale(data, numel, dtype, 1.0 / world_size);
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::create(CommunicatorOptions options) {
  RETURN_IF_ERROR(ensure_initialized());
  ASSIGN_OR_RETURN(MPI_Comm base, dup(MPI_COMM_WORLD, absl::Now() + options.timeout));
  return create_from(base, options);
}

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::create_from(MPI_Comm base,
                                                                              CommunicatorOptions options) {
  const absl::Time deadline = absl::Now() + options.timeout;
  RETURN_IF_ERROR(check(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler"));
  int rank = 0;
  int size = 0;
  RETURN_IF_ERROR(check(MPI_Comm_rank(base, &rank), "MPI_Comm_rank"));
  RETURN_IF_ERROR(check(MPI_Comm_size(base, &size), "MPI_Comm_size"));
  ASSIGN_OR_RETURN(MPI_Comm p2p, dup(base, deadline));
  ASSIGN_OR_RETURN(MPI_Comm control, dup(base, deadline));
  std::unique_ptr<MpiCommunicator> comm(new MpiCommunicator(options, base, p2p, rank, size));

  // Every rank has arrived (the dups completed), so the blocking split
  // cannot hang on a missing one.
  MPI_Comm local;
  RETURN_IF_ERROR(check(MPI_Comm_split_type(base, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
                        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)"));
  MPI_Comm_rank(local, &comm->local_rank_);
  MPI_Comm_size(local, &comm->local_size_);
  ASSIGN_OR_RETURN(comm->eager_bytes_by_peer_, eager_bytes_by_peer(base, local));
  MPI_Comm_free(&local);
  const bool oversubscribed = comm->local_size_ > static_cast<int>(std::thread::hardware_concurrency());
  ASSIGN_OR_RETURN(comm->engine_, Engine::create(control, rank, size, options.timeout, oversubscribed));

  void* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  if (found) comm->tag_ub_ = *static_cast<int*>(tag_ub);
  return comm;
}

MpiCommunicator::MpiCommunicator(CommunicatorOptions options, MPI_Comm collective, MPI_Comm p2p, int rank,
                                 int world_size)
    : options_(options), collective_comm_(collective), p2p_comm_(p2p), rank_(rank), world_size_(world_size) {}

MpiCommunicator::~MpiCommunicator() {
  // Operations in flight finish first; ones whose peers do not come within
  // 10 s (or the timeout, if shorter) abort the communicator rather than
  // hold up the error this rank is likely leaving with.
  bool aborted = false;
  if (engine_ != nullptr) {
    engine_->drain(std::min(engine_->timeout(), absl::Seconds(10)));
    aborted = !engine_->health().ok();
  }
  engine_.reset();
  // After a failure MPI_Comm_free could wait on requests that never end.
  if (has_failed() || aborted) return;
  MPI_Comm_free(&p2p_comm_);
  MPI_Comm_free(&collective_comm_);
}

Work MpiCommunicator::start_collective(std::string op, const Tensor& signature_tensor, int64_t sequence,
                                       std::vector<Round> rounds, std::vector<Tensor> also_held) {
  if (options_.debug && world_size_ > 1) {
    rounds.insert(rounds.begin(), signature_check_round(collective_comm_, rank_, world_size_,
                                                        make_call_signature(sequence, op, signature_tensor)));
  }
  OpInfo info{std::move(op), sequence, signature_tensor, rank_, world_size_, std::move(also_held)};
  return engine_->start(std::move(info), std::move(rounds));
}

Work MpiCommunicator::allreduce(const Tensor& tensor, ReduceOp op) {
  std::string name = absl::StrCat("allreduce(", reduce_op_name(op), ")");
  // Each call takes its place in the order first, refused or not: a call
  // refused on one rank only must not pair the others' next call with this.
  const int64_t sequence = sequence_++;
  if (absl::Status s = check_tensor(name, tensor, Device::cpu()); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_reduce_dtype(name, tensor, op); !s.ok()) return Work::failed(s);
  const RingBuffer buffer{collective_comm_, tag_for(sequence), rank_,         world_size_,
                          bytes_of(tensor), tensor.numel(),    tensor.dtype()};
  std::vector<Round> rounds;
  // An empty tensor too: its (empty) messages tell a rank whose tensor is
  // not empty that they differ.
  if (world_size_ > 1) {
    if (op == ReduceOp::kAvg) rounds.push_back(prescale_round(buffer.data, buffer.numel, buffer.dtype, world_size_));
    const ReduceOp reduce = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
    if (nbytes(tensor) <= kSmallAllreduceBytes && is_power_of_two(world_size_)) {
      recursive_doubling_allreduce(buffer, reduce, eager_bytes_by_peer_, rounds);
    } else {
      const int owned = (rank_ + 1) % world_size_;
      ring_reduce_scatter(buffer, reduce, owned, rounds);
      ring_allgather(buffer, owned, rounds);
    }
  }
  return start_collective(std::move(name), tensor, sequence, std::move(rounds));
}

Work MpiCommunicator::broadcast(const Tensor& tensor, int root) {
  std::string name = absl::StrCat("broadcast(root ", root, ")");
  const int64_t sequence = sequence_++;  // its place, refused or not (see allreduce)
  if (absl::Status s = check_tensor(name, tensor, Device::cpu()); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_peer(name, root, world_size_, "root"); !s.ok()) return Work::failed(s);
  std::vector<Round> rounds;
  binomial_broadcast(RingBuffer{collective_comm_, tag_for(sequence), rank_, world_size_, bytes_of(tensor),
                                tensor.numel(), tensor.dtype()},
                     root, rounds);
  return start_collective(std::move(name), tensor, sequence, std::move(rounds));
}

Work MpiCommunicator::allgather(const Tensor& output, const Tensor& input) {
  constexpr absl::string_view kName = "allgather";
  const int64_t sequence = sequence_++;  // its place, refused or not (see allreduce)
  for (const Tensor* t : {&output, &input}) {
    if (absl::Status s = check_tensor(kName, *t, Device::cpu()); !s.ok()) return Work::failed(s);
  }
  if (absl::Status s = check_gathered(kName, output, input, world_size_); !s.ok()) return Work::failed(s);
  char* slot = bytes_of(output) + rank_ * nbytes(input);
  if (nbytes(input) > 0 && slot != bytes_of(input)) std::memmove(slot, bytes_of(input), nbytes(input));
  std::vector<Round> rounds;
  ring_allgather(RingBuffer{collective_comm_, tag_for(sequence), rank_, world_size_, bytes_of(output), output.numel(),
                            output.dtype()},
                 rank_, rounds);
  return start_collective(std::string(kName), input, sequence, std::move(rounds), {output});
}

Work MpiCommunicator::reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) {
  std::string name = absl::StrCat("reduce_scatter(", reduce_op_name(op), ")");
  const int64_t sequence = sequence_++;  // its place, refused or not (see allreduce)
  for (const Tensor* t : {&output, &input}) {
    if (absl::Status s = check_tensor(name, *t, Device::cpu()); !s.ok()) return Work::failed(s);
  }
  if (absl::Status s = check_reduce_dtype(name, input, op); !s.ok()) return Work::failed(s);
  if (absl::Status s = check_gathered(name, input, output, world_size_); !s.ok()) return Work::failed(s);
  // The ring reduces in place; a scratch copy keeps `input` unchanged.
  auto scratch = std::make_shared<std::vector<char>>(bytes_of(input), bytes_of(input) + nbytes(input));
  const RingBuffer buffer{collective_comm_, tag_for(sequence), rank_,        world_size_,
                          scratch->data(),  input.numel(),     input.dtype()};
  std::vector<Round> rounds;
  if (op == ReduceOp::kAvg) rounds.push_back(prescale_round(buffer.data, buffer.numel, buffer.dtype, world_size_));
  ring_reduce_scatter(buffer, op == ReduceOp::kAvg ? ReduceOp::kSum : op, rank_, rounds);
  const int rank = rank_;
  rounds.push_back(local_round([buffer, scratch, output, rank] {
    // An empty output may have no storage: memcpy's pointers must not be null.
    if (nbytes(output) > 0) std::memcpy(bytes_of(output), buffer.chunk_data(rank), nbytes(output));
    return absl::OkStatus();
  }));
  return start_collective(std::move(name), input, sequence, std::move(rounds), {output});
}

Work MpiCommunicator::exchange(absl::Span<const PeerTransfer> transfers) {
  std::vector<std::string> parts;
  for (const PeerTransfer& t : transfers) {
    const bool send = t.kind == PeerTransfer::Kind::kSend;
    const char* name = send ? "send" : "recv";
    if (absl::Status s = check_tensor(name, t.tensor, Device::cpu()); !s.ok()) return Work::failed(s);
    if (absl::Status s = check_peer(name, t.peer, world_size_, send ? "destination" : "source"); !s.ok()) {
      return Work::failed(s);
    }
    parts.push_back(absl::StrCat(name, " ", t.tensor.describe(), send ? " to rank " : " from rank ", t.peer));
  }
  OpInfo info;
  info.name = absl::StrCat("exchange (", absl::StrJoin(parts, ", "), ")");
  info.rank = rank_;
  info.world_size = world_size_;
  std::vector<PeerTransfer> copy(transfers.begin(), transfers.end());
  for (const PeerTransfer& t : copy) info.tensors.push_back(t.tensor);
  Round round;
  MPI_Comm comm = p2p_comm_;
  round.post = [copy, comm](std::vector<MPI_Request>& requests) -> absl::Status {
    for (const PeerTransfer& t : copy) {
      if (t.kind == PeerTransfer::Kind::kSend) {
        RETURN_IF_ERROR(post_sends(requests, bytes_of(t.tensor), nbytes(t.tensor), t.peer, /*tag=*/0, comm));
      }
    }
    return absl::OkStatus();
  };
  // Labels as Round says: one per message sent, then one per message
  // received (messages of at most kMaxMessageBytes; one, empty, for an
  // empty tensor).
  std::vector<std::string> receive_labels;
  for (size_t i = 0; i < copy.size(); ++i) {
    const PeerTransfer& t = copy[i];
    if (t.kind == PeerTransfer::Kind::kSend) {
      round.labels.insert(round.labels.end(), static_cast<size_t>(message_count(nbytes(t.tensor))), parts[i]);
    } else {
      for (const Receive& r : receives_of(bytes_of(t.tensor), nbytes(t.tensor), t.peer, /*tag=*/0, comm)) {
        round.receives.push_back(r);
        receive_labels.push_back(parts[i]);
      }
    }
  }
  round.labels.insert(round.labels.end(), receive_labels.begin(), receive_labels.end());
  std::vector<Round> rounds;
  rounds.push_back(std::move(round));
  return engine_->start(std::move(info), std::move(rounds));
}

Work MpiCommunicator::barrier() {
  const int64_t sequence = sequence_++;
  std::vector<Round> rounds;
  MPI_Comm comm = collective_comm_;
  rounds.push_back(Round{[comm](std::vector<MPI_Request>& requests) -> absl::Status {
                           MPI_Request request;
                           RETURN_IF_ERROR(check(MPI_Ibarrier(comm, &request), "MPI_Ibarrier"));
                           requests.push_back(request);
                           return absl::OkStatus();
                         },
                         nullptr,
                         {},
                         /*posts_mpi_collective=*/true});
  return start_collective("barrier", Tensor(), sequence, std::move(rounds));
}

absl::StatusOr<std::unique_ptr<Communicator>> MpiCommunicator::split(int color, int key) {
  // Agreeing on the membership first is a collective with a deadline: the
  // blocking MPI_Comm_split that follows then finds every rank present.
  const Tensor colors = Tensor::allocate({world_size_, 2}, DType::kI32, Device::cpu());
  const Tensor mine = colors.select(0, rank_);
  mine.data<int32_t>()[0] = color;
  mine.data<int32_t>()[1] = key;
  RETURN_IF_ERROR(allgather(colors, mine).wait());
  std::vector<int> all(world_size_);
  for (int r = 0; r < world_size_; ++r) all[r] = colors.data<int32_t>()[2 * r];
  RETURN_IF_ERROR(check_split_colors(all));
  // The allgather is point-to-point: an earlier barrier or debug check may
  // not have made its MPI collective call yet (MPI_Ibarrier,
  // MPI_Iallgather), and MPI_Comm_split before it on one rank and after it
  // on another hangs both.
  engine_->post_pending_collective_calls();
  RETURN_IF_ERROR(engine_->health());
  MPI_Comm out;
  RETURN_IF_ERROR(check(MPI_Comm_split(collective_comm_, color, key, &out), "MPI_Comm_split"));
  ASSIGN_OR_RETURN(std::unique_ptr<MpiCommunicator> comm, create_from(out, options_));
  return std::unique_ptr<Communicator>(std::move(comm));
}

}  // namespace ts::collectives::mpi
