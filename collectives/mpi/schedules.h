// The MPI backend's collective algorithms, as schedules of rounds for the
// engine: ring reduce-scatter and allgather (bandwidth-optimal; allreduce is
// one then the other, reducing each received segment while it is in cache),
// recursive doubling for small allreduces on power-of-two worlds, and a
// binomial-tree broadcast. All move bytes with nonblocking point-to-point calls,
// so every step can be timed out.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "collectives/communicator.h"
#include "collectives/mpi/engine.h"
#include "tensor/dtype.h"

namespace ts::collectives::mpi {

// A collective's contiguous buffer on this rank, and the ring's view of it:
// world_size chunks, chunk c holding elements [offset(c), offset(c) +
// length(c)), sizes differing by at most one.
struct RingBuffer {
  MPI_Comm comm;
  int tag;
  int rank;
  int world_size;
  char* data;
  int64_t numel;
  DType dtype;

  int64_t chunk_offset(int chunk) const;
  int64_t chunk_length(int chunk) const;
  char* chunk_data(int chunk) const { return data + chunk_offset(chunk) * dtype_size(dtype); }
};

// Received segments are this large: small enough that the landing buffer
// and the slice it is added to stay in a core's L2 for the reduction that
// follows. (2 ranks on the 2-core dev VM, 1 MiB L2 per core, f32 at 1.2M
// elements: 256 KiB segments gave 0.98-1.11 of MPI_Allreduce's bandwidth,
// 1 MiB 0.85-0.89, 4 MiB 0.70; 64 KiB to 512 KiB were alike.)
inline constexpr int64_t kSegmentBytes = 256 << 10;
// Messages beyond this many bytes are split (MPI counts are int): post_sends
// posts one request per such piece.
inline constexpr int64_t kMaxMessageBytes = int64_t{1} << 30;
// Allreduces up to this size use recursive doubling when the world size is
// a power of two (one message latency per doubling instead of 2(p-1)).
inline constexpr int64_t kSmallAllreduceBytes = 64 << 10;

// Leaves the reduction of chunk `owned` on this rank (for every rank r,
// owned = r + shift mod world_size, the same shift on every rank). `op` avg
// reduces as sum. Appends to `rounds`.
void ring_reduce_scatter(const RingBuffer& buffer, ReduceOp op, int owned, std::vector<Round>& rounds);
// From each rank holding chunk `owned` (r + shift as above), every rank ends
// with all chunks.
void ring_allgather(const RingBuffer& buffer, int owned, std::vector<Round>& rounds);
// world_size must be a power of two. A message to peer r of up to a few
// times eager_bytes_by_peer[r] (0: no limit known) goes in pieces of that
// size: a few eager messages finish sooner than one rendezvous.
void recursive_doubling_allreduce(const RingBuffer& buffer, ReduceOp op, absl::Span<const int64_t> eager_bytes_by_peer,
                                  std::vector<Round>& rounds);
// How many messages post_sends splits `bytes` into: the full ones and the
// rest, even empty (see piece_sizes in schedules.cc).
inline int64_t message_count(int64_t bytes) { return bytes / kMaxMessageBytes + 1; }
// Appends Isends of [data, data + bytes) to `peer`, split into messages
// MPI's int counts allow; one empty message for zero bytes.
absl::Status post_sends(std::vector<MPI_Request>& requests, const char* data, int64_t bytes, int peer, int tag,
                        MPI_Comm comm);
// The receives of what post_sends sends.
std::vector<Receive> receives_of(char* data, int64_t bytes, int peer, int tag, MPI_Comm comm);
// The root's buffer to every rank down a binomial tree (ceil(log2 p) message
// times): a rank receives it whole from its parent, then sends it to each
// of its children.
void binomial_broadcast(const RingBuffer& buffer, int root, std::vector<Round>& rounds);

}  // namespace ts::collectives::mpi
