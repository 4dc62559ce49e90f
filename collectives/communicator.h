// The Communicator interface: collectives and point-to-point transfers on
// tensors among the ranks of a job, started asynchronously and completed
// through a Work handle. Backends: MPI for CPU tensors (collectives/mpi), NCCL
// for CUDA tensors (collectives/nccl). Every operation has a deadline: a peer
// that died or never arrives turns into an error naming the collective, the
// elapsed time and, over MPI, the ranks that did not arrive (NCCL's watchdog
// sees only its own rank's operations), never a hang.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::collectives {

// Sum of bool tensors is a logical or (as PyTorch does); avg needs a floating
// dtype.
enum class ReduceOp { kSum, kAvg, kMax };
absl::string_view reduce_op_name(ReduceOp op);  // "sum", "avg", "max"

struct CommunicatorOptions {
  // Longest any one operation may take before it fails (and, on the MPI
  // backend, the other ranks are told which peers never arrived).
  absl::Duration timeout = absl::Minutes(10);
  // Before each collective, the ranks compare (sequence number, op, shape,
  // dtype) and report the first mismatch instead of running it. Costs one
  // small allgather per collective.
  bool debug = false;

  // Defaults from the flags --collectives_timeout and --collectives_debug,
  // then the environment: TS_COLLECTIVES_TIMEOUT (seconds) and
  // TS_COLLECTIVES_DEBUG=1 win over the flags.
  static absl::StatusOr<CommunicatorOptions> from_flags_and_env();
};

// Completion of one asynchronous operation. CPU backends: wait() returns once
// the data is in place (or the operation failed or timed out). CUDA backends:
// wait() orders the caller's current stream after the operation, without
// blocking the host, and returns the errors known so far; synchronize()
// blocks the host too, and also reports a failure found while it waited.
// Code that reads a result on the host synchronizes: after wait(), a copy to
// the host would also wait for the operation, but an operation that a
// timeout aborted ends with a partial result and no error. Waiting again
// returns the same status.
class Work {
 public:
  class Impl {
   public:
    virtual ~Impl() = default;
    virtual absl::Status wait() = 0;
    virtual absl::Status synchronize() { return wait(); }
    virtual bool is_completed() = 0;  // never blocks; may make progress
  };

  explicit Work(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // A Work that already failed (e.g. an argument was invalid): nothing was
  // started on any rank.
  static Work failed(absl::Status status);
  // A Work with nothing left to do.
  static Work done();

  absl::Status wait() { return impl_->wait(); }
  absl::Status synchronize() { return impl_->synchronize(); }
  bool is_completed() { return impl_->is_completed(); }

 private:
  std::shared_ptr<Impl> impl_;
};

// One side of a point-to-point transfer in a batch (see exchange()).
struct PeerTransfer {
  enum class Kind { kSend, kRecv };
  Kind kind;
  Tensor tensor;
  int peer;
};

// All collectives must be called by every rank of the communicator in the
// same order with matching arguments (the debug option checks that). Tensors
// must be contiguous and on the backend's device type; results are written in
// place.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Rank and number of ranks on this machine.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual absl::string_view backend_name() const = 0;  // "mpi", "nccl"
  // The failure that ended this communicator (a collective that timed out,
  // a peer that died: every later call fails with it), OK while it works.
  // Never blocks. After wait() on a CUDA backend, a host that waited for the
  // device by other means asks it before trusting the results (see Work).
  virtual absl::Status health() const = 0;

  // Every rank ends with the reduction of all ranks' `tensor`.
  virtual Work allreduce(const Tensor& tensor, ReduceOp op) = 0;
  // Every rank ends with `root`'s tensor.
  virtual Work broadcast(const Tensor& tensor, int root) = 0;
  // output (world_size * input.numel() elements) holds each rank's input in
  // rank order; input may be output's own slot for this rank.
  virtual Work allgather(const Tensor& output, const Tensor& input) = 0;
  // input (world_size * output.numel() elements) is reduced across ranks and
  // rank r gets block r of the result in output. input is left unchanged.
  virtual Work reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) = 0;
  // Sends and receives to and from peers, all in flight together (a rank
  // may send to and receive from the same peer). Transfers between one pair
  // of ranks match in the order they were issued.
  virtual Work exchange(absl::Span<const PeerTransfer> transfers) = 0;
  virtual Work barrier() = 0;

  // A communicator of the ranks that pass the same `color`, ordered by `key`
  // (then by rank). Every rank must call it.
  virtual absl::StatusOr<std::unique_ptr<Communicator>> split(int color, int key) = 0;

  Work send(const Tensor& tensor, int peer);
  Work recv(const Tensor& tensor, int peer);
};

// Host values (timings, counters) of every rank, each rank giving as many,
// rank after rank, on every rank; they travel as an f64 tensor on `device`,
// the one the communicator moves (a GPU for NCCL).
absl::StatusOr<std::vector<double>> allgather_values(Communicator& comm, const Device& device,
                                                     const std::vector<double>& mine);

// Rank `root`'s host value on every rank (a decision every rank must take
// alike, as when to checkpoint or how to plan a sweep), sent as an f64 on
// `device`; every rank calls it. Integers travel exactly up to 2^53.
absl::StatusOr<double> broadcast_value(Communicator& comm, const Device& device, double mine, int root = 0);

// Rank `root`'s bytes (a serialized config, a flag list) on every rank, the
// size first, then the bytes as u8 on `device`; every rank calls it.
absl::StatusOr<std::string> broadcast_bytes(Communicator& comm, const Device& device, const std::string& mine,
                                            int root = 0);

// split()'s colors of every rank, rank after rank: each must be >= 0. Every
// rank checks the gathered colors, so all fail alike, naming the first rank
// at fault (a rank that checked only its own would leave the others waiting
// in the split until the timeout).
absl::Status check_split_colors(absl::Span<const int> colors);

// "allreduce(sum) #12 of f32[1000] on rank 0 of 2": the context every error
// message of a collective carries.
std::string describe_call(absl::string_view op, int64_t sequence, const Tensor& tensor, int rank, int world_size);

// Checks shared by every backend; errors name `op` and the tensor. `device`:
// the one the communicator works on (for NCCL its GPU: a tensor on another
// would reach NCCL on the wrong device).
absl::Status check_tensor(absl::string_view op, const Tensor& tensor, Device device);
absl::Status check_reduce_dtype(absl::string_view op, const Tensor& tensor, ReduceOp reduce);
absl::Status check_peer(absl::string_view op, int peer, int world_size, absl::string_view what);
// allgather/reduce_scatter: `large` must hold world_size times `small`'s
// elements, in the same dtype.
absl::Status check_gathered(absl::string_view op, const Tensor& large, const Tensor& small, int world_size);

}  // namespace ts::collectives
