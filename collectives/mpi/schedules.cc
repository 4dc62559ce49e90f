#include "collectives/mpi/schedules.h"

#include <algorithm>
#include <climits>

#include "absl/container/inlined_vector.h"
#include "base/status_macros.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/mpi/reduce_kernels.h"

namespace ts::collectives::mpi {

namespace {

// Eager messages are copied twice (into the shared queue, out of it), a
// rendezvous once after a handshake: recursive doubling splits a message
// into eager pieces only up to this many. (2 ranks, f32, comm_bench: 2-4
// pieces took 0.5-0.8x the time of one rendezvous, 5-7 about the same,
// 9-14 were 1.1-1.2x slower.)
constexpr int64_t kMaxEagerPieces = 4;

int mod(int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// Message lengths of one transfer: inline, since rounds hold them (a small
// allreduce's eager pieces and their empty end at the most).
using Pieces = absl::InlinedVector<int64_t, kMaxEagerPieces + 1>;

// The messages a transfer of `bytes` goes in: as many of `max_bytes` as
// fit, then the rest, sent even when empty, so that the lengths tell any
// two sizes apart (a receiver of one full piece would otherwise take the
// first of a longer transfer's pieces for all of it, its probe seeing the
// length it expects; one of no bytes that posted nothing would leave a
// peer's message to the next receive).
Pieces piece_sizes(int64_t bytes, int64_t max_bytes) {
  Pieces sizes;
  for (int64_t at = 0;; at += max_bytes) {
    sizes.push_back(std::min(max_bytes, bytes - at));
    if (sizes.back() < max_bytes) return sizes;
  }
}

// Appends Isends of consecutive messages of `pieces` bytes from `data`.
absl::Status send_pieces(std::vector<MPI_Request>& requests, const char* data, const Pieces& pieces, int peer, int tag,
                         MPI_Comm comm) {
  for (const int64_t size : pieces) {
    MPI_Request request;
    RETURN_IF_ERROR(check(MPI_Isend(data, static_cast<int>(size), MPI_BYTE, peer, tag, comm, &request), "MPI_Isend"));
    requests.push_back(request);
    data += size;
  }
  return absl::OkStatus();
}

// The receives of send_pieces' messages, into `data`.
std::vector<Receive> receive_pieces(char* data, const Pieces& pieces, int peer, int tag, MPI_Comm comm) {
  std::vector<Receive> receives;
  for (const int64_t size : pieces) {
    receives.push_back(Receive{data, size, peer, tag, comm});
    data += size;
  }
  return receives;
}

// The messages of a ring step's chunk of `bytes` that its round `i` carries,
// the chunk going in rounds of `segment` bytes: piece_sizes' piece i, and
// with the last full piece the empty one after it. Computed for the one
// round (each round posts its own; a whole list per round was quadratic in
// a step's segments).
Pieces step_pieces(int64_t bytes, int64_t i, int64_t segment) {
  const int64_t full = bytes / segment;
  const int64_t rest = bytes % segment;
  Pieces mine;
  if (i < full) mine.push_back(segment);
  if (i == full && (rest > 0 || full == 0)) mine.push_back(rest);
  if (i == full - 1 && rest == 0) mine.push_back(0);
  return mine;
}

}  // namespace

absl::Status post_sends(std::vector<MPI_Request>& requests, const char* data, int64_t bytes, int peer, int tag,
                        MPI_Comm comm) {
  return send_pieces(requests, data, piece_sizes(bytes, kMaxMessageBytes), peer, tag, comm);
}

std::vector<Receive> receives_of(char* data, int64_t bytes, int peer, int tag, MPI_Comm comm) {
  return receive_pieces(data, piece_sizes(bytes, kMaxMessageBytes), peer, tag, comm);
}

int64_t RingBuffer::chunk_offset(int chunk) const {
  const int64_t base = numel / world_size;
  const int64_t rem = numel % world_size;
  return chunk * base + std::min<int64_t>(chunk, rem);
}

int64_t RingBuffer::chunk_length(int chunk) const { return numel / world_size + (chunk < numel % world_size ? 1 : 0); }

void ring_reduce_scatter(const RingBuffer& b, ReduceOp op, int owned, std::vector<Round>& rounds) {
  const int p = b.world_size;
  if (p == 1) return;
  const int64_t item = dtype_size(b.dtype);
  const int64_t segment = std::max<int64_t>(1, kSegmentBytes / item);
  const int right = mod(b.rank + 1, p);
  const int left = mod(b.rank - 1, p);
  // Uninitialized (MPI overwrites it): zeroing it cost a pass over memory
  // per operation.
  auto scratch =
      std::make_shared_for_overwrite<char[]>(static_cast<size_t>(std::min(segment, b.chunk_length(0)) * item));
  // Step k sends chunk owned - 1 - k (for k > 0 the one reduced at step
  // k - 1) and reduces the incoming chunk owned - 2 - k; the last one
  // reduced is `owned`.
  for (int k = 0; k < p - 1; ++k) {
    const int send_chunk = mod(int64_t{owned} - 1 - k, p);
    const int recv_chunk = mod(int64_t{owned} - 2 - k, p);
    const int64_t send_len = b.chunk_length(send_chunk);
    const int64_t recv_len = b.chunk_length(recv_chunk);
    // Each chunk's messages over the step are piece_sizes(its bytes,
    // segment bytes): an empty chunk (fewer elements than ranks) sends one
    // empty message, a last full segment one more after it, so that a rank
    // whose chunk has another length gets a wrong one, not nothing.
    for (int64_t i = 0; i == 0 || i * segment < std::max(send_len, recv_len); ++i) {
      const int64_t at = i * segment;
      const int64_t recv_n = std::clamp<int64_t>(recv_len - at, 0, segment);
      const char* send_ptr = b.chunk_data(send_chunk) + std::min(at, send_len) * item;
      char* recv_dst = b.chunk_data(recv_chunk) + std::min(at, recv_len) * item;
      rounds.push_back(
          Round{[=](std::vector<MPI_Request>& requests) {
                  return send_pieces(requests, send_ptr, step_pieces(send_len * item, i, segment * item), right, b.tag,
                                     b.comm);
                },
                [=]() -> absl::Status {
                  reduce_into(recv_dst, recv_dst, scratch.get(), recv_n, b.dtype, op);
                  return absl::OkStatus();
                },
                {},
                /*posts_mpi_collective=*/false,
                receive_pieces(scratch.get(), step_pieces(recv_len * item, i, segment * item), left, b.tag, b.comm)});
    }
  }
}

void ring_allgather(const RingBuffer& b, int owned, std::vector<Round>& rounds) {
  const int p = b.world_size;
  if (p == 1) return;
  const int64_t item = dtype_size(b.dtype);
  const int right = mod(b.rank + 1, p);
  const int left = mod(b.rank - 1, p);
  for (int k = 0; k < p - 1; ++k) {
    const int send_chunk = mod(int64_t{owned} - k, p);
    const int recv_chunk = mod(int64_t{owned} - k - 1, p);
    char* send_ptr = b.chunk_data(send_chunk);
    char* recv_ptr = b.chunk_data(recv_chunk);
    const int64_t send_bytes = b.chunk_length(send_chunk) * item;
    const int64_t recv_bytes = b.chunk_length(recv_chunk) * item;
    rounds.push_back(Round{[=](std::vector<MPI_Request>& requests) {
                             return post_sends(requests, send_ptr, send_bytes, right, b.tag, b.comm);
                           },
                           nullptr,
                           {},
                           /*posts_mpi_collective=*/false,
                           receives_of(recv_ptr, recv_bytes, left, b.tag, b.comm)});
  }
}

void recursive_doubling_allreduce(const RingBuffer& b, ReduceOp op, absl::Span<const int64_t> eager_bytes_by_peer,
                                  std::vector<Round>& rounds) {
  const int64_t bytes = b.numel * dtype_size(b.dtype);
  auto scratch = std::make_shared_for_overwrite<char[]>(static_cast<size_t>(bytes));
  // Each partner adds the other's partial sum to its own: a + b and b + a
  // are the same floats, so every rank ends bitwise identical.
  for (int mask = 1; mask < b.world_size; mask <<= 1) {
    const int partner = b.rank ^ mask;
    const int64_t eager = eager_bytes_by_peer[partner];
    const int64_t piece = eager > 0 && bytes <= kMaxEagerPieces * eager ? eager : kMaxMessageBytes;
    const Pieces pieces = piece_sizes(bytes, piece);
    rounds.push_back(Round{[=](std::vector<MPI_Request>& requests) {
                             return send_pieces(requests, b.data, pieces, partner, b.tag, b.comm);
                           },
                           [=]() -> absl::Status {
                             reduce_into(b.data, b.data, scratch.get(), b.numel, b.dtype, op);
                             return absl::OkStatus();
                           },
                           {},
                           /*posts_mpi_collective=*/false,
                           receive_pieces(scratch.get(), pieces, partner, b.tag, b.comm)});
  }
}

void binomial_broadcast(const RingBuffer& b, int root, std::vector<Round>& rounds) {
  const int p = b.world_size;
  const int64_t bytes = b.numel * dtype_size(b.dtype);
  if (p == 1) return;
  // Ranks relative to the root: v receives from v minus its highest bit,
  // then sends to v + m for every power of two m above that bit.
  const int v = mod(int64_t{b.rank} - root, p);
  int m = 1;
  while (m <= v) m <<= 1;  // the first power of two above v
  if (v > 0) {
    const int parent = mod(int64_t{v} - m / 2 + root, p);
    rounds.push_back(
        Round{nullptr, nullptr, {}, /*posts_mpi_collective=*/false, receives_of(b.data, bytes, parent, b.tag, b.comm)});
  }
  std::vector<int> children;
  for (; v + m < p; m <<= 1) children.push_back(mod(int64_t{v} + m + root, p));
  if (children.empty()) return;
  // The largest subtree first: it has the most sends still to make.
  std::reverse(children.begin(), children.end());
  rounds.push_back(Round{[b, bytes, children](std::vector<MPI_Request>& requests) -> absl::Status {
                           for (const int child : children) {
                             RETURN_IF_ERROR(post_sends(requests, b.data, bytes, child, b.tag, b.comm));
                           }
                           return absl::OkStatus();
                         },
                         nullptr});
}

}  // namespace ts::collectives::mpi
