// TCP rendezvous for jobs launched without MPI (torchrun-style variables):
// rank 0 listens on MASTER_ADDR:MASTER_PORT, the others connect; then small
// blobs (an ncclUniqueId) go from rank 0 to everyone. Every step has a
// deadline and names the ranks or address it was waiting for.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ts::collectives {

class TcpRendezvous {
 public:
  static absl::StatusOr<std::unique_ptr<TcpRendezvous>> connect(const std::string& addr, int port, int rank,
                                                                int world_size, absl::Duration timeout);
  ~TcpRendezvous();
  TcpRendezvous(const TcpRendezvous&) = delete;
  TcpRendezvous& operator=(const TcpRendezvous&) = delete;

  // Rank 0's `data` on every rank (other ranks' argument is ignored).
  absl::StatusOr<std::string> broadcast(const std::string& data);

 private:
  TcpRendezvous(int rank, int world_size, absl::Duration timeout, std::string where)
      : rank_(rank), world_size_(world_size), timeout_(timeout), where_(std::move(where)) {}

  int rank_;
  int world_size_;
  absl::Duration timeout_;
  std::string where_;       // "127.0.0.1:29500", for messages
  std::vector<int> peers_;  // rank 0: socket of rank r at r (index 0 unused); others: [server]
};

}  // namespace ts::collectives
