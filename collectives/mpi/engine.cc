#include "collectives/mpi/engine.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "collectives/mpi/mpi_runtime.h"

namespace ts::collectives::mpi {

namespace {

constexpr int kControlTag = 7;
// How long a timed-out rank waits for peers to answer its probe: live peers
// that are polling answer within microseconds.
absl::Duration probe_grace(absl::Duration timeout) {
  return std::clamp(timeout / 10, absl::Milliseconds(100), absl::Seconds(5));
}
// When ranks outnumber cores, polls spin this many rounds and then yield the
// core, which the peer we wait for may need (Open MPI's yield_when_idle).
// Otherwise they spin, as MPI_Wait does: yielding to unrelated processes
// costs whole scheduler slices.
constexpr int kSpinPolls = 2000;
// Housekeeping runs on one progress call in this many: serving the control
// channel (probes, aborts) and reading the clock for deadlines. Each MPI_Test
// of the control request runs MPI's progress engine once more, and a clock
// read per poll cost more than the poll itself; 64 polls are microseconds,
// against a probe grace of at least 100 ms and timeouts of seconds.
constexpr int64_t kHousekeepingInterval = 64;

std::string seconds(absl::Duration d) { return absl::StrFormat("%.2f s", absl::ToDoubleSeconds(d)); }

}  // namespace

void OpInfo::release_tensors() {
  // Moved out and destroyed here (assigning an empty Tensor trips a false
  // -Wmaybe-uninitialized in GCC 12 through absl::InlinedVector).
  const std::vector<Tensor> dropped_tensors = std::exchange(tensors, {});
  const Tensor dropped_signature = std::move(signature);
}

std::string OpInfo::description() const {
  if (sequence < 0) return absl::StrCat(name, " on rank ", rank, " of ", world_size);
  return describe_call(name, sequence, signature, rank, world_size);
}

struct Engine::ControlMessage {
  enum Kind : int32_t { kProbe, kReply, kAbort };
  int32_t kind = kProbe;
  int32_t from = 0;
  int64_t sequence = -1;        // probe: asked about; reply: the sequence the peer is in
  int64_t asked_sequence = -1;  // reply: which probe it answers
  char text[512] = {};          // reply: the peer's op; abort: the reason

  void set_text(absl::string_view s) {
    const size_t n = std::min(s.size(), sizeof(text) - 1);
    std::memcpy(text, s.data(), n);
    text[n] = '\0';
  }
};

struct Engine::Op {
  OpInfo info;
  std::vector<Round> rounds;
  size_t next_round = 0;
  std::vector<MPI_Request> requests;
  // Of the current round: how many requests post() made, and per receive
  // the index of its request in `requests` (-1 until its message arrived).
  size_t posted_requests = 0;
  std::vector<int> receive_requests;
  int unmatched_receives = 0;
  // A point-to-point message of another length, received into `drained`:
  // fails the operation when its round ends.
  absl::Status wrong_length;
  std::vector<std::unique_ptr<char[]>> drained;
  Clock::time_point start;
  Clock::time_point deadline;
  bool finished = false;
  bool deferred = false;  // its next round waits for earlier collective calls
  absl::Status status;

  // Rounds not posted yet call an MPI collective.
  bool collective_calls_left() const {
    return std::any_of(rounds.begin() + static_cast<std::ptrdiff_t>(next_round), rounds.end(),
                       [](const Round& round) { return round.posts_mpi_collective; });
  }
};

class Engine::OpWork final : public Work::Impl {
 public:
  OpWork(std::shared_ptr<Engine> engine, std::shared_ptr<Op> op) : engine_(std::move(engine)), op_(std::move(op)) {}
  absl::Status wait() override { return engine_->wait(op_); }
  bool is_completed() override { return engine_->poll(op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Op> op_;
};

absl::StatusOr<std::shared_ptr<Engine>> Engine::create(MPI_Comm control, int rank, int world_size,
                                                       absl::Duration timeout, bool oversubscribed) {
  std::shared_ptr<Engine> engine(new Engine(control, rank, world_size, timeout, oversubscribed));
  std::lock_guard<std::mutex> lock(engine->mu_);
  engine->post_control_recv_locked();
  if (!engine->broken_.ok()) return engine->broken_;
  return engine;
}

Engine::Engine(MPI_Comm control, int rank, int world_size, absl::Duration timeout, bool oversubscribed)
    : control_(control),
      rank_(rank),
      world_size_(world_size),
      timeout_(timeout),
      oversubscribed_(oversubscribed),
      incoming_(std::make_unique<ControlMessage>()),
      replies_(world_size),
      replied_(world_size, false) {}

Engine::~Engine() {
  // After a failure, requests may stay pending forever; the memory they
  // point into is left alone (leaked) rather than freed under MPI's feet.
  if (!broken_.ok()) {
    (void)incoming_.release();
    for (Outgoing& o : outgoing_) (void)o.message.release();
    return;
  }
  if (incoming_request_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&incoming_request_);
    MPI_Wait(&incoming_request_, MPI_STATUS_IGNORE);
  }
  for (Outgoing& o : outgoing_) MPI_Wait(&o.request, MPI_STATUS_IGNORE);
  MPI_Comm c = control_;
  MPI_Comm_free(&c);
}

absl::Status Engine::health() {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

Work Engine::start(OpInfo info, std::vector<Round> rounds) {
  auto op = std::make_shared<Op>();
  op->info = std::move(info);
  op->rounds = std::move(rounds);
  op->start = Clock::now();
  // A timeout past the clock's range (absl's infinite duration, say) is no
  // deadline; the sum would wrap and every operation time out at once.
  const auto timeout = absl::ToChronoNanoseconds(timeout_);
  op->deadline = timeout >= Clock::time_point::max() - op->start ? Clock::time_point::max() : op->start + timeout;
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_.ok()) {
    return Work::failed(absl::Status(
        broken_.code(), absl::StrCat(op->info.description(),
                                     ": the communicator was aborted after an earlier failure: ", broken_.message())));
  }
  const bool collectives_blocked = std::any_of(active_.begin(), active_.end(), [](const std::shared_ptr<Op>& earlier) {
    return !earlier->finished && earlier->collective_calls_left();
  });
  advance_locked(*op, collectives_blocked);
  if (!op->finished) active_.push_back(op);
  return Work(std::make_shared<OpWork>(shared_from_this(), op));
}

absl::Status Engine::wait(const std::shared_ptr<Op>& op) {
  for (int polls = 0; !poll(op); ++polls) {
    if (oversubscribed_ && polls > kSpinPolls) std::this_thread::yield();
  }
  return op->status;
}

void Engine::progress_until(const std::function<bool()>& done_locked) {
  for (int polls = 0;; ++polls) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_locked()) return;
      progress_locked();
    }
    if (oversubscribed_ && polls > kSpinPolls) std::this_thread::yield();
  }
}

void Engine::drain(absl::Duration limit) {
  const Clock::time_point until = limit >= absl::FromChrono(Clock::time_point::max() - Clock::now())
                                      ? Clock::time_point::max()
                                      : Clock::now() + absl::ToChronoNanoseconds(limit);
  progress_until([&] { return active_.empty() || Clock::now() >= until; });
  std::lock_guard<std::mutex> lock(mu_);
  if (active_.empty()) return;
  abort_locked(
      absl::AbortedError(absl::StrCat("rank ", rank_, " closed the communicator with ", active_.size(),
                                      " operation(s) in flight, the first ", active_.front()->info.description())),
      /*tell_peers=*/true);
  for (const std::shared_ptr<Op>& op : active_) {
    if (!op->finished) fail_locked(*op, broken_);
  }
  active_.clear();
}

void Engine::post_pending_collective_calls() {
  progress_until([this] {
    return std::none_of(active_.begin(), active_.end(),
                        [](const std::shared_ptr<Op>& op) { return !op->finished && op->collective_calls_left(); });
  });
}

bool Engine::poll(const std::shared_ptr<Op>& op) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!op->finished) progress_locked();
  return op->finished;
}

void Engine::progress_locked() {
  const bool housekeeping = progress_calls_++ % kHousekeepingInterval == 0;
  if (housekeeping) serve_control_locked();
  // Whether an op before this one (in start order) has MPI collective calls
  // left to post.
  bool collectives_blocked = false;
  waiting_sources_.clear();
  for (const std::shared_ptr<Op>& op : active_) {
    progress_op_locked(*op, housekeeping, collectives_blocked);
    if (!op->finished && op->collective_calls_left()) collectives_blocked = true;
  }
  std::erase_if(active_, [](const std::shared_ptr<Op>& op) { return op->finished; });
}

void Engine::progress_op_locked(Op& op, bool housekeeping, bool collectives_blocked) {
  if (op.finished) return;
  if (!broken_.ok()) {
    // Another operation's failure (maybe one started later) aborted it.
    fail_locked(op, absl::Status(broken_.code(), absl::StrCat(op.info.description(),
                                                              ": the communicator was aborted: ", broken_.message())));
    return;
  }
  if (op.deferred) {
    advance_locked(op, collectives_blocked);
    if (op.deferred && housekeeping && Clock::now() > op.deadline) on_timeout_locked(op);
    return;
  }
  if (absl::Status s = match_receives_locked(op); !s.ok()) {
    abort_locked(std::move(s), /*tell_peers=*/true);
    fail_locked(op, broken_);
    return;
  }
  // The round cannot end before every receive has its message (and
  // MPI_Improbe ran MPI's progress engine for the sends).
  if (op.unmatched_receives > 0) {
    if (housekeeping && Clock::now() > op.deadline) on_timeout_locked(op);
    return;
  }
  int complete = 0;
  const int rc = MPI_Testall(static_cast<int>(op.requests.size()), op.requests.data(), &complete, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    abort_locked(absl::UnavailableError(absl::StrCat(op.info.description(), ": ", check(rc, "MPI_Testall").message())),
                 /*tell_peers=*/true);
    fail_locked(op, broken_);
    return;
  }
  if (complete) {
    op.requests.clear();
    if (!op.wrong_length.ok()) {
      fail_locked(op, op.wrong_length);
      return;
    }
    const Round& posted = op.rounds[op.next_round - 1];
    absl::Status status = posted.then ? ts::capture(posted.then) : absl::OkStatus();
    if (!status.ok()) {
      fail_locked(op, std::move(status));
      return;
    }
    advance_locked(op, collectives_blocked);
  } else if (housekeeping && Clock::now() > op.deadline) {
    on_timeout_locked(op);
  }
}

void Engine::advance_locked(Op& op, bool collectives_blocked) {
  if (op.next_round == op.rounds.size()) {
    op.finished = true;
    op.rounds.clear();  // releases the scratch the rounds hold
    op.info.release_tensors();
    return;
  }
  op.deferred = collectives_blocked && op.rounds[op.next_round].posts_mpi_collective;
  if (op.deferred) return;
  const Round& round = op.rounds[op.next_round++];
  absl::Status posted = round.post ? ts::capture([&] { return round.post(op.requests); }) : absl::OkStatus();
  op.posted_requests = op.requests.size();
  op.receive_requests.assign(round.receives.size(), -1);
  op.unmatched_receives = static_cast<int>(round.receives.size());
  // Posted in the middle of a progress pass, its receives come before those
  // of later operations, which this pass may probe yet.
  for (const Receive& r : round.receives) waiting_sources_.push_back(Source{r.comm, r.peer, r.tag});
  if (!posted.ok()) {
    abort_locked(absl::Status(posted.code(), absl::StrCat(op.info.description(), ": ", posted.message())),
                 /*tell_peers=*/true);
    fail_locked(op, broken_);
  }
}

absl::Status Engine::match_receives_locked(Op& op) {
  if (op.unmatched_receives == 0) return absl::OkStatus();
  const Round& round = op.rounds[op.next_round - 1];
  for (size_t j = 0; j < round.receives.size(); ++j) {
    if (op.receive_requests[j] >= 0) continue;
    const Receive& r = round.receives[j];
    const Source source{r.comm, r.peer, r.tag};
    if (std::find(waiting_sources_.begin(), waiting_sources_.end(), source) != waiting_sources_.end()) continue;
    int arrived = 0;
    MPI_Message message;
    MPI_Status status;
    RETURN_IF_ERROR(check(MPI_Improbe(r.peer, r.tag, r.comm, &arrived, &message, &status), "MPI_Improbe"));
    if (!arrived) {
      waiting_sources_.push_back(source);
      continue;
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    char* into = r.data;
    if (count != r.bytes) {
      const size_t label = op.posted_requests + j;
      const std::string error = absl::StrCat(
          op.info.description(), ": ",
          label < round.labels.size() ? round.labels[label] : absl::StrCat("the receive from rank ", r.peer), " got ",
          count, " bytes where ", r.bytes, " were expected (",
          op.info.sequence >= 0 ? "the ranks passed tensors of different sizes or dtypes to this collective; "
                                  "TS_COLLECTIVES_DEBUG=1 names each rank's call"
                                : "the peer sent a tensor of another size",
          ")");
      // The message stays unreceived: the communicator is aborted.
      if (op.info.sequence >= 0) return absl::InvalidArgumentError(error);
      if (op.wrong_length.ok()) op.wrong_length = absl::InvalidArgumentError(error);
      op.drained.push_back(std::make_unique_for_overwrite<char[]>(static_cast<size_t>(count)));
      into = op.drained.back().get();
    }
    MPI_Request request;
    RETURN_IF_ERROR(check(MPI_Imrecv(into, count, MPI_BYTE, &message, &request), "MPI_Imrecv"));
    op.receive_requests[j] = static_cast<int>(op.requests.size());
    op.requests.push_back(request);
    --op.unmatched_receives;
  }
  return absl::OkStatus();
}

void Engine::fail_locked(Op& op, absl::Status status) {
  op.finished = true;
  op.status = std::move(status);
  // MPI may still write into the buffers of requests that never completed:
  // those stay allocated (leaked) rather than be reused under it.
  if (!op.requests.empty()) {
    new std::vector<Round>(std::move(op.rounds));
    new std::vector<std::unique_ptr<char[]>>(std::move(op.drained));
    auto* held = new std::vector<Tensor>(std::move(op.info.tensors));
    held->push_back(std::move(op.info.signature));
  }
  op.rounds.clear();
  op.info.release_tensors();
}

void Engine::on_timeout_locked(Op& op) {
  const absl::Duration elapsed = absl::FromChrono(Clock::now() - op.start);
  std::string why;
  if (op.info.sequence >= 0) {
    why = diagnose_collective_locked(op);
  } else {
    const Round& round = op.rounds[op.next_round - 1];
    const auto done = [&](int request) {
      int complete = 0;
      MPI_Test(&op.requests[static_cast<size_t>(request)], &complete, MPI_STATUS_IGNORE);
      return complete != 0;
    };
    std::vector<std::string> pending;
    for (size_t i = 0; i < op.posted_requests && i < round.labels.size(); ++i) {
      if (!done(static_cast<int>(i))) pending.push_back(round.labels[i]);
    }
    for (size_t j = 0; j < round.receives.size() && op.posted_requests + j < round.labels.size(); ++j) {
      const int request = op.receive_requests[j];
      if (request < 0 || !done(request)) pending.push_back(round.labels[op.posted_requests + j]);
    }
    why = absl::StrCat("still waiting to ", absl::StrJoin(pending, ", "),
                       " (that rank exited, hangs, or has not posted the matching call)");
  }
  abort_locked(absl::DeadlineExceededError(
                   absl::StrCat(op.info.description(), " timed out after ", seconds(elapsed), ": ", why)),
               /*tell_peers=*/true);
  fail_locked(op, broken_);
}

std::string Engine::diagnose_collective_locked(const Op& op) {
  probe_sequence_ = op.info.sequence;
  std::fill(replied_.begin(), replied_.end(), false);
  ControlMessage probe;
  probe.kind = ControlMessage::kProbe;
  probe.from = rank_;
  probe.sequence = op.info.sequence;
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer != rank_) send_control_locked(peer, probe);
  }
  const absl::Duration grace = probe_grace(timeout_);
  const Clock::time_point until = Clock::now() + absl::ToChronoNanoseconds(grace);
  while (Clock::now() < until && std::count(replied_.begin(), replied_.end(), true) < world_size_ - 1 && broken_.ok()) {
    serve_control_locked();
  }
  std::vector<int> silent;
  std::vector<std::string> elsewhere;
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_) continue;
    if (!replied_[peer]) {
      silent.push_back(peer);
      continue;
    }
    // A peer in the same call describes it as this rank does, but for its
    // rank; one at the same position in another collective (it took another
    // branch) says what it is in, as the reply carries it.
    const std::string same_call = describe_call(op.info.name, op.info.sequence, op.info.signature, peer, world_size_)
                                      .substr(0, sizeof(ControlMessage::text) - 1);
    if (replies_[peer].first != op.info.sequence || replies_[peer].second != same_call) {
      elsewhere.push_back(replies_[peer].first < 0 ? absl::StrCat("rank ", peer, " is in no collective")
                                                   : absl::StrCat("rank ", peer, " is in ", replies_[peer].second));
    }
  }
  std::vector<std::string> parts;
  if (!silent.empty()) {
    parts.push_back(absl::StrCat("rank", silent.size() > 1 ? "s " : " ", absl::StrJoin(silent, ", "),
                                 " did not reach it (no answer to a liveness probe within ", seconds(grace),
                                 ": exited, hung, or busy outside collectives)"));
  }
  if (!elsewhere.empty()) {
    parts.push_back(absl::StrCat("ranks disagree on the collective: ", absl::StrJoin(elsewhere, "; ")));
  }
  if (parts.empty()) parts.push_back("every rank reached it; the transfers themselves stalled");
  return absl::StrJoin(parts, "; ");
}

void Engine::abort_locked(absl::Status status, bool tell_peers) {
  if (!broken_.ok()) return;
  broken_ = std::move(status);
  mark_failed();
  if (!tell_peers) return;
  ControlMessage abort;
  abort.kind = ControlMessage::kAbort;
  abort.from = rank_;
  abort.set_text(broken_.message());
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer != rank_) send_control_locked(peer, abort);
  }
}

void Engine::serve_control_locked() {
  while (!outgoing_.empty()) {
    int done = 0;
    MPI_Test(&outgoing_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    outgoing_.pop_front();
  }
  while (incoming_request_ != MPI_REQUEST_NULL) {
    int arrived = 0;
    if (MPI_Test(&incoming_request_, &arrived, MPI_STATUS_IGNORE) != MPI_SUCCESS || !arrived) return;
    const ControlMessage message = *incoming_;
    post_control_recv_locked();
    switch (message.kind) {
      case ControlMessage::kProbe: {
        // Answer with the oldest collective still running here.
        ControlMessage reply;
        reply.kind = ControlMessage::kReply;
        reply.from = rank_;
        reply.asked_sequence = message.sequence;
        for (const std::shared_ptr<Op>& op : active_) {
          if (!op->finished && op->info.sequence >= 0) {
            reply.sequence = op->info.sequence;
            reply.set_text(op->info.description());
            break;
          }
        }
        send_control_locked(message.from, reply);
        break;
      }
      case ControlMessage::kReply:
        if (message.asked_sequence == probe_sequence_ && message.from >= 0 && message.from < world_size_) {
          replied_[message.from] = true;
          replies_[message.from] = {message.sequence, message.text};
        }
        break;
      case ControlMessage::kAbort:
        abort_locked(
            absl::AbortedError(absl::StrCat("rank ", message.from, " aborted the communicator: ", message.text)),
            /*tell_peers=*/false);
        break;
    }
  }
}

void Engine::post_control_recv_locked() {
  const int rc = MPI_Irecv(incoming_.get(), sizeof(ControlMessage), MPI_BYTE, MPI_ANY_SOURCE, kControlTag, control_,
                           &incoming_request_);
  if (rc != MPI_SUCCESS) {
    incoming_request_ = MPI_REQUEST_NULL;
    abort_locked(check(rc, "MPI_Irecv (control channel)"), /*tell_peers=*/false);
  }
}

void Engine::send_control_locked(int peer, const ControlMessage& message) {
  Outgoing& o = outgoing_.emplace_back(Outgoing{std::make_unique<ControlMessage>(message), MPI_REQUEST_NULL});
  if (MPI_Isend(o.message.get(), sizeof(ControlMessage), MPI_BYTE, peer, kControlTag, control_, &o.request) !=
      MPI_SUCCESS) {
    outgoing_.pop_back();
  }
}

}  // namespace ts::collectives::mpi
