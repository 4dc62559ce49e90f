// The MPI backend's progress engine: runs operations as schedules of rounds
// of nonblocking MPI requests, polls them against each operation's deadline,
// and on a timeout asks every peer over a private control communicator which
// operation it is in, so the error names the ranks that never arrived; the
// survivors are then told to give up too (the communicator is aborted).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/communicator.h"

namespace ts::collectives::mpi {

// One message a round receives: `bytes` (maybe 0) into `data` from `peer`.
struct Receive {
  char* data;
  int64_t bytes;
  int peer;
  int tag;
  MPI_Comm comm;
};

// One step of an operation: post() starts MPI requests (sends, MPI
// collective calls; appending them) and the engine receives `receives`;
// once all of them complete, then() runs (a local reduction, a check), and
// the next round is posted. An error from then() fails the operation but
// leaves the communicator usable (nothing is left in flight). Both run on
// whichever thread polls the engine, maybe in a wait() on another operation:
// an exception one throws (a tensor op's ts::Error) counts as its failed
// Status instead of escaping into that caller.
//
// The engine probes each receive's message (MPI_Improbe) before receiving
// it, so a message of another length never reaches `data`: Open MPI 4.1.4
// writes a longer message sent by rendezvous (over 4 KiB on shared memory)
// past the end of the receive buffer before it reports MPI_ERR_TRUNCATE,
// and completes a shorter one without a word. Such a message fails the
// operation, naming the receive; a collective's aborts the communicator
// (its ranks passed tensors of different sizes and are rounds apart), a
// point-to-point one is received into a buffer of its own first, so that
// the peer's send completes and the communicator stays usable.
struct Round {
  std::function<absl::Status(std::vector<MPI_Request>&)> post;
  std::function<absl::Status()> then;
  // What each request post() makes and then each receive waits for ("recv
  // f32[3] from rank 2"), for the errors of point-to-point operations; may
  // be empty.
  std::vector<std::string> labels;
  // post() calls an MPI collective (MPI_Ibarrier, MPI_Iallgather) on the
  // communicator, which every rank must call in the same order: such rounds
  // are posted in the order of their operations' start, each only after
  // every earlier operation has posted all of its own. Point-to-point rounds
  // (matched by tag) are posted as soon as they can be.
  bool posts_mpi_collective = false;
  // Messages from one peer with one tag are received in this order.
  std::vector<Receive> receives;
};

struct OpInfo {
  // "allreduce(sum)"; for point-to-point, the list of transfers.
  std::string name;
  // Position among the communicator's collectives; -1 for point-to-point.
  int64_t sequence = -1;
  // The tensor a collective's messages describe; may be undefined.
  Tensor signature;
  int rank = 0;
  int world_size = 1;
  // Other tensors the rounds read or write, held until the operation ends
  // (as `signature` is).
  std::vector<Tensor> tensors;

  // describe_call(...) for a collective, "<name> on rank r of n" for
  // point-to-point. Built only for errors and liveness probes: formatting
  // it for every operation was a good part of a small allreduce's time.
  std::string description() const;
  // Lets go of `signature` and `tensors` (the operation ended).
  void release_tensors();
};

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  // `control` is owned by the engine from here on and used for nothing else.
  // `oversubscribed`: more ranks on this machine than cores (polls yield).
  static absl::StatusOr<std::shared_ptr<Engine>> create(MPI_Comm control, int rank, int world_size,
                                                        absl::Duration timeout, bool oversubscribed);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Posts the first round now; later rounds are posted as the engine is
  // polled (by any Work's wait() or is_completed()).
  Work start(OpInfo info, std::vector<Round> rounds);

  // Progresses every started operation to its end for at most `limit`
  // (less when an operation's deadline comes first); what is still in
  // flight then is failed and the communicator aborted (peers told), its
  // buffers left to MPI. The communicator calls it before it goes: MPI
  // would write into the freed buffers of an operation still in flight (its
  // Work dropped after an error, say), and its later rounds would go to
  // freed communicators.
  void drain(absl::Duration limit);
  // Progresses the started operations until none has an MPI collective call
  // left to post (or they failed): a blocking collective on the same MPI
  // communicator (MPI_Comm_split) must come after every such call on every
  // rank. Point-to-point operations may stay in flight.
  void post_pending_collective_calls();

  absl::Duration timeout() const { return timeout_; }
  // Why the communicator was aborted, OK until it is.
  absl::Status health();

 private:
  struct Op;
  class OpWork;
  struct ControlMessage;

  Engine(MPI_Comm control, int rank, int world_size, absl::Duration timeout, bool oversubscribed);
  absl::Status wait(const std::shared_ptr<Op>& op);
  bool poll(const std::shared_ptr<Op>& op);  // true once op finished
  // Progresses the operations until `done_locked()` holds.
  void progress_until(const std::function<bool()>& done_locked);
  void progress_locked();
  // One op's share of progress_locked.
  void progress_op_locked(Op& op, bool housekeeping, bool collectives_blocked);
  // Posts op's next round (or finishes it), unless that round calls an MPI
  // collective and `collectives_blocked` (an earlier op has such calls left
  // to post): then op waits, deferred, for a later poll.
  void advance_locked(Op& op, bool collectives_blocked);
  // Receives each message of op's round that has arrived, unless a receive
  // from the same source (communicator, peer, tag) still waits before it,
  // in this op or an earlier one (waiting_sources_): messages from one
  // source match receives in the order they were started, as pre-posted
  // MPI_Irecvs would. An error (a collective's message of another length)
  // is to abort the communicator.
  absl::Status match_receives_locked(Op& op);
  void fail_locked(Op& op, absl::Status status);
  void on_timeout_locked(Op& op);
  std::string diagnose_collective_locked(const Op& op);
  void abort_locked(absl::Status status, bool tell_peers);
  void serve_control_locked();
  void post_control_recv_locked();
  void send_control_locked(int peer, const ControlMessage& message);

  // Deadlines run on the monotonic clock: a wall-clock step (NTP) must not
  // fire or postpone a timeout, and it is the cheaper clock to read.
  using Clock = std::chrono::steady_clock;

  const MPI_Comm control_;
  const int rank_;
  const int world_size_;
  const absl::Duration timeout_;
  const bool oversubscribed_;

  std::mutex mu_;
  std::vector<std::shared_ptr<Op>> active_;
  // Sources with a receive still unmatched, found so far in this progress
  // pass (in start order) or posted during it; kept from pass to pass for
  // its capacity.
  struct Source {
    MPI_Comm comm;
    int peer;
    int tag;
    bool operator==(const Source&) const = default;
  };
  std::vector<Source> waiting_sources_;
  int64_t progress_calls_ = 0;
  absl::Status broken_;  // set once the communicator was aborted
  std::unique_ptr<ControlMessage> incoming_;
  MPI_Request incoming_request_ = MPI_REQUEST_NULL;
  struct Outgoing {
    std::unique_ptr<ControlMessage> message;
    MPI_Request request;
  };
  std::deque<Outgoing> outgoing_;
  // Replies to the probe in flight: (sequence the peer is in, op), by rank.
  int64_t probe_sequence_ = -1;
  std::vector<std::pair<int64_t, std::string>> replies_;
  std::vector<bool> replied_;
};

}  // namespace ts::collectives::mpi
