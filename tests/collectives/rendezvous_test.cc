// The TCP rendezvous over loopback, one thread per rank: the broadcast
// reaches everyone, and missing ranks or a missing rank 0 are errors naming
// them within the timeout.
#include "collectives/rendezvous.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

// A port nobody listens on right now (the kernel picks it).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(TcpRendezvous, BroadcastReachesEveryRank) {
  const int port = free_port();
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

TEST(TcpRendezvous, MissingRanksAreNamed) {
  const int port = free_port();
  absl::StatusOr<std::unique_ptr<TcpRendezvous>> rank1;
  std::thread peer([&] { rank1 = TcpRendezvous::connect("127.0.0.1", port, 1, 4, absl::Seconds(20)); });
  const absl::Time start = absl::Now();
  expect_error(TcpRendezvous::connect("127.0.0.1", port, 0, 4, absl::Milliseconds(1500)).status(),
               absl::StatusCode::kDeadlineExceeded, {"127.0.0.1:", "waiting for ranks 2, 3 to connect"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  peer.join();
}

TEST(TcpRendezvous, NoRankZeroIsAnErrorNamingTheAddress) {
  const int port = free_port();
  expect_error(TcpRendezvous::connect("127.0.0.1", port, 2, 3, absl::Milliseconds(300)).status(),
               absl::StatusCode::kDeadlineExceeded,
               {"rank 2 could not connect to rank 0 at 127.0.0.1:", "Connection refused"});
  expect_error(TcpRendezvous::connect("", port, 1, 2, absl::Seconds(1)).status(), absl::StatusCode::kInvalidArgument,
               {"MASTER_ADDR is not set"});
}

}  // namespace
}  // namespace ts::collectives
