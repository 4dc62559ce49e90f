#include "collectives/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ts::collectives {

namespace {

constexpr uint32_t kMagic = 0x74735256;  // "tsRV"

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t world_size;
};

int remaining_ms(absl::Time deadline) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

// Moves exactly `n` bytes through a nonblocking socket before the deadline.
absl::Status transfer(int fd, void* data, size_t n, bool send, absl::Time deadline, const std::string& what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    const int ready = ::poll(&pfd, 1, remaining_ms(deadline));
    if (ready == 0) return absl::DeadlineExceededError(absl::StrCat(what, ": timed out"));
    if (ready < 0 && errno != EINTR) return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
    if (ready <= 0) continue;
    const ssize_t k = send ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (k == 0) return absl::UnavailableError(absl::StrCat(what, ": the peer closed the connection"));
    if (k < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return absl::OkStatus();
}

void make_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

absl::StatusOr<sockaddr_in> resolve(const std::string& addr, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (const int rc = ::getaddrinfo(addr.c_str(), nullptr, &hints, &result); rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous: cannot resolve MASTER_ADDR '", addr, "': ", ::gai_strerror(rc)));
  }
  sockaddr_in out = *reinterpret_cast<sockaddr_in*>(result->ai_addr);
  ::freeaddrinfo(result);
  out.sin_port = htons(static_cast<uint16_t>(port));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpRendezvous>> TcpRendezvous::connect(const std::string& addr, int port, int rank,
                                                                      int world_size, absl::Duration timeout) {
  if (addr.empty()) {
    return absl::InvalidArgumentError("rendezvous: MASTER_ADDR is not set (rank 0's host name or address)");
  }
  ASSIGN_OR_RETURN(sockaddr_in address, resolve(addr, port));
  const std::string where = absl::StrCat(addr, ":", port);
  std::unique_ptr<TcpRendezvous> rv(new TcpRendezvous(rank, world_size, timeout, where));
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout;

  if (rank == 0) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listener, world_size) != 0) {
      const std::string error = std::strerror(errno);
      ::close(listener);
      return absl::UnavailableError(absl::StrCat("rendezvous: rank 0 cannot listen on port ", port, ": ", error));
    }
    make_nonblocking(listener);
    rv->peers_.assign(world_size, -1);
    int joined = 1;
    while (joined < world_size) {
      pollfd pfd{listener, POLLIN, 0};
      if (::poll(&pfd, 1, remaining_ms(deadline)) <= 0 && absl::Now() >= deadline) {
        std::vector<int> missing;
        for (int r = 1; r < world_size; ++r) {
          if (rv->peers_[r] < 0) missing.push_back(r);
        }
        ::close(listener);
        return absl::DeadlineExceededError(absl::StrCat(
            "rendezvous on ", where, ": rank 0 timed out after ", absl::FormatDuration(absl::Now() - start),
            " waiting for rank", missing.size() > 1 ? "s " : " ", absl::StrJoin(missing, ", "), " to connect"));
      }
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) continue;
      make_nonblocking(fd);
      Hello hello{};
      absl::Status s = transfer(fd, &hello, sizeof(hello), false, deadline, "rendezvous: reading a peer's hello");
      if (s.ok() && (hello.magic != kMagic || hello.world_size != world_size || hello.rank < 1 ||
                     hello.rank >= world_size || rv->peers_[hello.rank] >= 0)) {
        s = absl::FailedPreconditionError(absl::StrCat("rendezvous on ", where, ": a peer announced rank ", hello.rank,
                                                       " of ", hello.world_size, " but rank 0 expects ranks 1..",
                                                       world_size - 1, " of ", world_size, " once each"));
      }
      if (!s.ok()) {
        ::close(fd);
        ::close(listener);
        return s;
      }
      rv->peers_[hello.rank] = fd;
      ++joined;
    }
    ::close(listener);
    return rv;
  }

  // Other ranks retry until rank 0 listens.
  std::string last_error = "no attempt";
  while (true) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      make_nonblocking(fd);
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Hello hello{kMagic, rank, world_size};
      RETURN_IF_ERROR(transfer(fd, &hello, sizeof(hello), true, deadline,
                               absl::StrCat("rendezvous: rank ", rank, " sending its hello to ", where)));
      rv->peers_.push_back(fd);
      return rv;
    }
    last_error = std::strerror(errno);
    ::close(fd);
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("rendezvous: rank ", rank, " could not connect to rank 0 at ",
                                                      where, " within ", absl::FormatDuration(timeout),
                                                      " (last error: ", last_error, ")"));
    }
    ::usleep(50'000);
  }
}

TcpRendezvous::~TcpRendezvous() {
  for (int fd : peers_) {
    if (fd >= 0) ::close(fd);
  }
}

absl::StatusOr<std::string> TcpRendezvous::broadcast(const std::string& data) {
  const absl::Time deadline = absl::Now() + timeout_;
  if (rank_ == 0) {
    uint64_t size = data.size();
    for (int r = 1; r < world_size_; ++r) {
      const std::string what = absl::StrCat("rendezvous broadcast on ", where_, ": sending to rank ", r);
      RETURN_IF_ERROR(transfer(peers_[r], &size, sizeof(size), true, deadline, what));
      RETURN_IF_ERROR(transfer(peers_[r], const_cast<char*>(data.data()), data.size(), true, deadline, what));
    }
    return data;
  }
  const std::string what = absl::StrCat("rendezvous broadcast on ", where_, ": rank ", rank_, " receiving from rank 0");
  uint64_t size = 0;
  RETURN_IF_ERROR(transfer(peers_[0], &size, sizeof(size), false, deadline, what));
  std::string out(size, '\0');
  RETURN_IF_ERROR(transfer(peers_[0], out.data(), size, false, deadline, what));
  return out;
}

}  // namespace ts::collectives
