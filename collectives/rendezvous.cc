#include "collectives/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

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

// Milliseconds left before the deadline as poll() takes them: -1 (no end)
// for an infinite deadline (TS_COLLECTIVES_TIMEOUT=inf), else clamped to
// [0, INT_MAX]; a plain cast turned the infinity, and anything past 24
// days, into a negative count.
int poll_ms(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(deadline - absl::Now()), 0, std::numeric_limits<int>::max()));
}

// Moves exactly `n` bytes through a nonblocking socket before the deadline.
absl::Status transfer(int fd, void* data, size_t n, bool send, absl::Time deadline, const std::string& what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    const int ready = ::poll(&pfd, 1, poll_ms(deadline));
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

// A connection to `address` made before the deadline, or why not. The
// connect is nonblocking: a host that drops the packets (a wrong
// MASTER_ADDR, a firewall, rank 0's full accept queue) costs the deadline,
// not the kernel's two minutes of retries.
absl::StatusOr<int> connect_before(const sockaddr_in& address, absl::Time deadline) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  make_nonblocking(fd);
  int error = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd pfd{fd, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&pfd, 1, poll_ms(deadline));
      } while (ready < 0 && errno == EINTR);
      if (ready == 0) {
        error = ETIMEDOUT;
      } else if (ready < 0) {
        error = errno;
      } else {
        socklen_t length = sizeof(error);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      }
    }
  }
  if (error != 0) {
    ::close(fd);
    return absl::UnavailableError(std::strerror(error));
  }
  return fd;
}

// Whether accept's errno means "try again": nothing pending, a signal, or
// a connection that failed in the queue (accept(2) on Linux passes on the
// pending connection's network errors; the next one may be fine).
bool accept_can_retry(int error) {
  switch (error) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
      return true;
    default:
      return false;
  }
}

// A connection rank 0 accepted that has not yet said which rank it is.
struct Newcomer {
  int fd;
  Hello hello{};
  size_t received = 0;
};

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
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listener, world_size) != 0) {
      const std::string error = std::strerror(errno);
      if (listener >= 0) ::close(listener);
      return absl::UnavailableError(absl::StrCat("rendezvous: rank 0 cannot listen on port ", port, ": ", error));
    }
    make_nonblocking(listener);
    rv->peers_.assign(world_size, -1);
    // Hellos are read as their bytes arrive, from every newcomer at once, so
    // a connection that sends nothing (a port scanner, a stale process) holds
    // up no rank; one that is not ours (another magic number) or closes
    // before its hello is dropped.
    std::vector<Newcomer> newcomers;
    const auto close_unjoined = [&] {
      ::close(listener);
      for (const Newcomer& n : newcomers) ::close(n.fd);
    };
    int joined = 1;
    while (joined < world_size) {
      std::vector<pollfd> polled = {{listener, POLLIN, 0}};
      for (const Newcomer& n : newcomers) polled.push_back({n.fd, POLLIN, 0});
      const int ready = ::poll(polled.data(), polled.size(), poll_ms(deadline));
      if (ready < 0 && errno != EINTR) {
        const std::string error = std::strerror(errno);
        close_unjoined();
        return absl::UnavailableError(absl::StrCat("rendezvous on ", where, ": rank 0 polling: ", error));
      }
      if (ready <= 0 && absl::Now() >= deadline) {
        std::vector<int> missing;
        for (int r = 1; r < world_size; ++r) {
          if (rv->peers_[r] < 0) missing.push_back(r);
        }
        const std::string silent =
            newcomers.empty() ? "" : absl::StrCat(" (", newcomers.size(), " connection(s) never said which rank)");
        close_unjoined();
        return absl::DeadlineExceededError(absl::StrCat(
            "rendezvous on ", where, ": rank 0 timed out after ", absl::FormatDuration(absl::Now() - start),
            " waiting for rank", missing.size() > 1 ? "s " : " ", absl::StrJoin(missing, ", "), " to connect", silent));
      }
      if (ready <= 0) continue;
      // Newcomers from the back, so that erasing one leaves the indices of
      // those still to visit (newcomer i was polled at i + 1).
      for (size_t i = newcomers.size(); i-- > 0;) {
        if (polled[i + 1].revents == 0) continue;
        Newcomer& n = newcomers[i];
        const ssize_t k = ::recv(n.fd, reinterpret_cast<char*>(&n.hello) + n.received, sizeof(Hello) - n.received, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (k > 0) n.received += static_cast<size_t>(k);
        const bool whole = n.received == sizeof(Hello);
        if (k <= 0 || (whole && n.hello.magic != kMagic)) {
          ::close(n.fd);
          newcomers.erase(newcomers.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        if (!whole) continue;
        const Hello& hello = n.hello;
        if (hello.world_size != world_size || hello.rank < 1 || hello.rank >= world_size ||
            rv->peers_[hello.rank] >= 0) {
          close_unjoined();
          return absl::FailedPreconditionError(
              absl::StrCat("rendezvous on ", where, ": a peer announced rank ", hello.rank, " of ", hello.world_size,
                           " but rank 0 expects ranks 1..", world_size - 1, " of ", world_size, " once each"));
        }
        rv->peers_[hello.rank] = n.fd;
        ++joined;
        newcomers.erase(newcomers.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (polled[0].revents != 0) {
        int fd;
        while ((fd = ::accept(listener, nullptr, nullptr)) >= 0) {
          make_nonblocking(fd);
          newcomers.push_back({fd});
        }
        // Out of file descriptors (or memory) the listener stays readable
        // and every accept fails at once: waiting would spin to the deadline
        // and then blame the ranks that did connect.
        if (!accept_can_retry(errno)) {
          const std::string error = std::strerror(errno);
          close_unjoined();
          return absl::UnavailableError(absl::StrCat("rendezvous on ", where, ": rank 0 cannot accept connections (",
                                                     joined, " of ", world_size, " ranks joined): ", error));
        }
      }
    }
    close_unjoined();
    return rv;
  }

  // Other ranks retry until rank 0 listens.
  while (true) {
    absl::StatusOr<int> fd = connect_before(address, deadline);
    if (fd.ok()) {
      const int one = 1;
      ::setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Hello hello{kMagic, rank, world_size};
      if (absl::Status sent = transfer(*fd, &hello, sizeof(hello), true, deadline,
                                       absl::StrCat("rendezvous: rank ", rank, " sending its hello to ", where));
          !sent.ok()) {
        ::close(*fd);
        return sent;
      }
      rv->peers_.push_back(*fd);
      return rv;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("rendezvous: rank ", rank, " could not connect to rank 0 at ",
                                                      where, " within ", absl::FormatDuration(timeout),
                                                      " (last error: ", fd.status().message(), ")"));
    }
    // Rank 0 is not listening yet: try again in 50 ms (or at the deadline).
    const int pause_ms = poll_ms(deadline) < 0 ? 50 : std::min(50, poll_ms(deadline));
    ::usleep(static_cast<useconds_t>(pause_ms) * 1000);
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
