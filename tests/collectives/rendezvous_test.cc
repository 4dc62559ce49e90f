// The TCP rendezvous over loopback, one thread per rank: the broadcast
// reaches everyone, also with no timeout; missing ranks or a missing rank 0 are errors naming
// them within the timeout, also when rank 0's host drops the connection's
// packets; a peer launched with another world size or a rank already taken
// is named; connections that are not ranks hold up no one; a rank 0 that
// cannot accept says why at once.
#include "collectives/rendezvous.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

// A port held for one test: bound on every address with SO_REUSEADDR and
// not listening. While it is held the kernel gives it to no other bind to
// port 0 and to no outgoing connection (a port found free and closed again
// could be taken so by a test running in parallel before rank 0 binds it),
// yet rank 0, which binds with SO_REUSEADDR, can listen on it; nothing else
// can, so a connection there is refused until rank 0 does.
class ReservedPort {
 public:
  ReservedPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof(a);
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
  }
  ~ReservedPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;

  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

// What separates an error at a deadline from a hang on a busy machine.
constexpr absl::Duration kSlack = absl::Seconds(10);

TEST(TcpRendezvous, BroadcastReachesEveryRank) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  constexpr int kWorld = 4;
  std::vector<absl::StatusOr<std::string>> got(kWorld, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      auto rv = TcpRendezvous::connect("127.0.0.1", port, r, kWorld, absl::Seconds(20));
      if (!rv.ok()) {
        got[r] = rv.status();
        return;
      }
      got[r] = (*rv)->broadcast(r == 0 ? std::string("unique id\0bytes", 15) : "");
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_OK(got[r].status());
    EXPECT_EQ(*got[r], std::string("unique id\0bytes", 15)) << "rank " << r;
  }
}

// TS_COLLECTIVES_TIMEOUT=inf: a rank that finds rank 0 not listening yet
// tries again 50 ms later (the infinite deadline, cast to an int of
// milliseconds, once made that pause 71 minutes).
TEST(TcpRendezvous, AnInfiniteTimeoutStillRetriesSoon) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  absl::StatusOr<std::unique_ptr<TcpRendezvous>> rank1;
  const absl::Time start = absl::Now();
  std::thread peer([&] { rank1 = TcpRendezvous::connect("127.0.0.1", port, 1, 2, absl::InfiniteDuration()); });
  absl::SleepFor(absl::Milliseconds(300));  // rank 1's first connection is refused
  ASSERT_OK(TcpRendezvous::connect("127.0.0.1", port, 0, 2, absl::InfiniteDuration()).status());
  peer.join();
  ASSERT_OK(rank1.status());
  EXPECT_LT(absl::Now() - start, kSlack);
}

TEST(TcpRendezvous, MissingRanksAreNamed) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  absl::StatusOr<std::unique_ptr<TcpRendezvous>> rank1;
  std::thread peer([&] { rank1 = TcpRendezvous::connect("127.0.0.1", port, 1, 4, absl::Seconds(20)); });
  const absl::Time start = absl::Now();
  const absl::Duration timeout = absl::Milliseconds(1500);
  expect_error(TcpRendezvous::connect("127.0.0.1", port, 0, 4, timeout).status(), absl::StatusCode::kDeadlineExceeded,
               {"127.0.0.1:", "waiting for ranks 2, 3 to connect"});
  EXPECT_LT(absl::Now() - start, timeout + kSlack);
  peer.join();
}

// Launch mistakes: one rank given another WORLD_SIZE, or two given the same
// RANK. Rank 0 names what the peer announced and what it expects.
TEST(TcpRendezvous, AMismatchedPeerIsNamed) {
  struct Peer {
    int rank, world_size;
  };
  struct Case {
    int world_size;  // rank 0's
    std::vector<Peer> peers;
    std::string message;
  };
  const std::vector<Case> cases = {
      {2, {{1, 3}}, "a peer announced rank 1 of 3 but rank 0 expects ranks 1..1 of 2 once each"},
      // The second rank 1 to arrive is the one named.
      {3, {{1, 3}, {1, 3}}, "a peer announced rank 1 of 3 but rank 0 expects ranks 1..2 of 3 once each"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const ReservedPort reserved;
    const int port = reserved.port();
    ASSERT_GT(port, 0) << "no port to reserve";
    std::vector<std::thread> peers;
    for (const Peer& p : c.peers) {
      peers.emplace_back(
          [port, p] { (void)TcpRendezvous::connect("127.0.0.1", port, p.rank, p.world_size, absl::Seconds(5)); });
    }
    expect_error(TcpRendezvous::connect("127.0.0.1", port, 0, c.world_size, absl::Seconds(20)).status(),
                 absl::StatusCode::kFailedPrecondition, {"127.0.0.1:", c.message});
    for (std::thread& t : peers) t.join();
  }
}

// A loopback socket connected to `port`, once something listens there.
int connect_raw(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  for (int attempt = 0; attempt < 400; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

TEST(TcpRendezvous, ConnectionsThatAreNotRanksHoldUpNoOne) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  // Held up by the silent connection, the ranks would wait out this timeout.
  const absl::Duration timeout = absl::Seconds(60);
  absl::StatusOr<std::string> got0 = absl::UnknownError("not run");
  std::thread rank0([&] {
    auto rv = TcpRendezvous::connect("127.0.0.1", port, 0, 2, timeout);
    got0 = rv.ok() ? (*rv)->broadcast("id") : rv.status();
  });
  // Before rank 1: one connection that says nothing (a port scanner), one
  // that says something else, one that closes at once.
  const int silent = connect_raw(port);
  ASSERT_GE(silent, 0);
  const int stranger = connect_raw(port);
  ASSERT_GE(stranger, 0);
  const char noise[sizeof(int32_t) * 3] = "GET / HTTP";
  ASSERT_EQ(::send(stranger, noise, sizeof(noise), 0), static_cast<ssize_t>(sizeof(noise)));
  ::close(connect_raw(port));
  const absl::Time start = absl::Now();
  auto rank1 = TcpRendezvous::connect("127.0.0.1", port, 1, 2, timeout);
  ASSERT_OK(rank1.status());
  absl::StatusOr<std::string> got1 = (*rank1)->broadcast("");
  rank0.join();
  // Milliseconds when nothing holds the ranks up; the timeout when something does.
  EXPECT_LT(absl::Now() - start, timeout / 3);
  ASSERT_OK(got0.status());
  ASSERT_OK(got1.status());
  EXPECT_EQ(*got1, "id");
  ::close(silent);
  ::close(stranger);
}

TEST(TcpRendezvous, RankZeroThatNeverAnswersIsATimeoutNotAHang) {
  // A listener whose accept queue is full drops new connections' packets,
  // as an unreachable host does: the connect is never answered.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  socklen_t len = sizeof(a);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  const int queued = connect_raw(port);  // fills the queue
  ASSERT_GE(queued, 0);
  const absl::Time start = absl::Now();
  const absl::Duration timeout = absl::Seconds(1);
  expect_error(TcpRendezvous::connect("127.0.0.1", port, 1, 2, timeout).status(), absl::StatusCode::kDeadlineExceeded,
               {"rank 1 could not connect to rank 0 at 127.0.0.1:", "Connection timed out"});
  // The kernel alone would retry the connect for about two minutes.
  EXPECT_LT(absl::Now() - start, timeout + kSlack);
  ::close(queued);
  ::close(listener);
}

TEST(TcpRendezvous, RankZeroOutOfFileDescriptorsSaysSoAtOnce) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  int result[2];
  ASSERT_EQ(::pipe(result), 0);
  // Rank 0 runs in a child whose file descriptor limit leaves room for the
  // listener alone, so every accept fails with EMFILE.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int lowest_free = ::dup(0);
    ::close(lowest_free);
    const rlimit limit{static_cast<rlim_t>(lowest_free + 1), static_cast<rlim_t>(lowest_free + 1)};
    ::setrlimit(RLIMIT_NOFILE, &limit);
    // A deadline far past the wait below: only an error at once answers.
    const absl::Status status = TcpRendezvous::connect("127.0.0.1", port, 0, 2, absl::Seconds(120)).status();
    const std::string message = status.ToString();
    (void)!::write(result[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(result[1]);
  const absl::Time start = absl::Now();
  const int rank1 = connect_raw(port);  // queued by the kernel, never accepted
  ASSERT_GE(rank1, 0);
  std::string message;
  pollfd answered{result[0], POLLIN, 0};
  const absl::Duration answer_within = absl::Seconds(30);  // at once, with a busy machine's slack
  if (::poll(&answered, 1, static_cast<int>(absl::ToInt64Milliseconds(answer_within))) == 1) {
    char buffer[512];
    for (ssize_t k; (k = ::read(result[0], buffer, sizeof(buffer))) > 0;) message.append(buffer, k);
  } else {
    ::kill(child, SIGKILL);  // it spins: the listener stays readable
  }
  ::waitpid(child, nullptr, 0);
  ::close(result[0]);
  ::close(rank1);
  EXPECT_LT(absl::Now() - start, answer_within + kSlack);
  EXPECT_NE(message.find("UNAVAILABLE"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 cannot accept connections (1 of 2 ranks joined): Too many open files"),
            std::string::npos)
      << message;
}

TEST(TcpRendezvous, NoRankZeroIsAnErrorNamingTheAddress) {
  const ReservedPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0) << "no port to reserve";
  expect_error(TcpRendezvous::connect("127.0.0.1", port, 2, 3, absl::Milliseconds(300)).status(),
               absl::StatusCode::kDeadlineExceeded,
               {"rank 2 could not connect to rank 0 at 127.0.0.1:", "Connection refused"});
  expect_error(TcpRendezvous::connect("", port, 1, 2, absl::Seconds(1)).status(), absl::StatusCode::kInvalidArgument,
               {"MASTER_ADDR is not set"});
}

}  // namespace
}  // namespace ts::collectives
