// Communication graphs for decentralized training, as Bluefog defines them
// (bluefog/common/topology_util.py): for each rank, the in-neighbors it
// averages with (and their weights), its own weight, and the out-neighbors it
// sends to. The named static graphs have doubly stochastic weight matrices, so
// repeated neighbor averaging converges to the global average; schedules give
// one graph per iteration (Bluefog's dynamic topologies).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ts::collectives {

class Topology {
 public:
  using Edge = std::pair<int, int>;  // (from, to): `from` sends to `to`

  // Rank i sends to i + 2^k (mod size) for every 2^k < size; weights
  // 1/(in-degree + 1), self included.
  static absl::StatusOr<Topology> exponential_two(int size);
  // Each rank with both ring neighbors (one when size is 2).
  static absl::StatusOr<Topology> ring(int size);
  // A rows x cols grid, rows the largest divisor of size up to sqrt(size),
  // 4-neighborhoods, Metropolis-Hastings weights.
  static absl::StatusOr<Topology> mesh(int size);
  static absl::StatusOr<Topology> fully_connected(int size);
  // Every rank linked both ways with rank 0 (StarGraph): 1/size on each edge,
  // so rank 0 keeps 1/size of itself and the others 1 - 1/size.
  static absl::StatusOr<Topology> star(int size);
  // size / local_size machines of local_size consecutive ranks, each machine
  // fully connected inside; local rank l of machine m also sends to local
  // rank l of machine m + 1 (InnerOuterRingGraph) or of machines m + 2^k for
  // every 2^k < machines (InnerOuterExpo2Graph). Weights 1/(in-degree + 1).
  // size must be a multiple of local_size.
  static absl::StatusOr<Topology> inner_outer_ring(int size, int local_size);
  static absl::StatusOr<Topology> inner_outer_exp2(int size, int local_size);
  // Any directed graph (self-loops ignored), each rank averaging itself and
  // its in-neighbors with weights 1/(in-degree + 1), as Bluefog's examples do
  // for dynamic graphs: rows sum to 1, columns only when in-degrees match.
  static absl::StatusOr<Topology> from_edges(int size, absl::Span<const Edge> edges);

  int size() const { return static_cast<int>(self_weight_.size()); }
  // (source rank, weight) pairs, sources ascending.
  const std::vector<std::pair<int, double>>& in_neighbors(int rank) const { return in_[rank]; }
  const std::vector<int>& out_neighbors(int rank) const { return out_[rank]; }
  double self_weight(int rank) const { return self_weight_[rank]; }

 private:
  // kUniform: 1/(in-degree + 1). kMetropolis: w_ij = 1/(1 + max(deg_i,
  // deg_j)), for undirected graphs.
  enum class Weights { kUniform, kMetropolis };
  static Topology build(int size, absl::Span<const Edge> edges, Weights weights);

  std::vector<std::vector<std::pair<int, double>>> in_;
  std::vector<std::vector<int>> out_;
  std::vector<double> self_weight_;
};

// The graph of each iteration (0, 1, ...) of a dynamic topology. Every rank
// evaluates it at the same iteration, so sends and receives pair up.
using TopologySchedule = std::function<Topology(int64_t iteration)>;

// GetDynamicOnePeerSendRecvRanks: at iteration k each rank sends only to its
// (k mod out-degree)-th out-neighbor of `base`, counted clockwise from itself,
// and averages with whoever sends to it, weights 1/(in-degree + 1). On
// exponential_two(machines) this is GetExp2DynamicSendRecvMachineRanks, the
// machine schedule of Bluefog's hierarchical benchmark. Every rank of `base`
// needs an out-neighbor (a world of one rank keeps `base`).
absl::StatusOr<TopologySchedule> one_peer_schedule(const Topology& base);

// GetInnerOuterRingDynamicSendRecvRanks and
// GetInnerOuterExpo2DynamicSendRecvRanks: at iteration k, local rank
// k mod local_size of each machine sends to its counterpart on the next
// machine (ring) or on the machine 2^j ahead, j cycling (exp2); the other
// ranks of the machine pass along an inner ring that skips it, 1 (ring) or
// 2^j (exp2) places ahead. Every rank then averages with its one sender, 1/2
// each. Needs at least two machines and, as in Bluefog, local_size > 2.
absl::StatusOr<TopologySchedule> inner_outer_ring_schedule(int size, int local_size);
absl::StatusOr<TopologySchedule> inner_outer_exp2_schedule(int size, int local_size);

// The local_size of a launch laid out as the inner-outer graphs assume
// (Bluefog checks is_homogeneous() for them): every machine holds the same
// number L of consecutive ranks, machine m ranks m*L .. m*L + L - 1, so rank
// r is local rank r mod L. `local_sizes[r]` and `local_ranks[r]` are what
// rank r's launcher says; an error names the first rank that breaks it.
absl::StatusOr<int> uniform_machine_size(absl::Span<const int> local_sizes, absl::Span<const int> local_ranks);

}  // namespace ts::collectives
