#include "collectives/topology.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ts::collectives {

namespace {

absl::Status check_size(absl::string_view graph, int size) {
  if (size < 1) return absl::InvalidArgumentError(absl::StrCat(graph, " topology of ", size, " ranks"));
  return absl::OkStatus();
}

// Bluefog's inner-outer graphs assume homogeneous machines: local_size
// consecutive ranks each.
absl::Status check_machines(absl::string_view what, int size, int local_size) {
  if (size < 1 || local_size < 1 || size % local_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", size, " ranks do not make whole machines of local_size ", local_size));
  }
  return absl::OkStatus();
}

// The generators behind the inner-outer schedules need an inner ring of at
// least two ranks besides the one leaving the machine (Bluefog asserts
// local_size > 2), and another machine to leave for.
absl::Status check_inner_outer_schedule(absl::string_view what, int size, int local_size) {
  RETURN_IF_ERROR(check_machines(what, size, local_size));
  if (local_size <= 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": local_size ", local_size, " (of ", size,
                                                   " ranks) must be above 2; use one_peer_schedule"));
  }
  if (size == local_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", size, " ranks with local_size ", local_size, " are one machine; it needs two"));
  }
  return absl::OkStatus();
}

// 1, 2, 4, ... below n.
std::vector<int> powers_of_two_below(int n) {
  std::vector<int> powers;
  for (int p = 1; p < n; p *= 2) powers.push_back(p);
  return powers;
}

// The largest j with 2^j <= n, for n >= 1 (Bluefog's int(np.log2(n))).
int floor_log2(int n) { return std::bit_width(static_cast<unsigned>(n)) - 1; }

// 1, 2, 4, ..., 2^max_exponent, 1, 2, ... over the iterations.
int cycling_power_of_two(int64_t iteration, int max_exponent) {
  return 1 << static_cast<int>(iteration % (max_exponent + 1));
}

// All ranks of a machine send to each other; local rank l of machine m also
// sends to local rank l of machine m + d for each d in machine_steps.
std::vector<Topology::Edge> inner_outer_edges(int size, int local_size, absl::Span<const int> machine_steps) {
  const int machines = size / local_size;
  std::vector<Topology::Edge> edges;
  for (int rank = 0; rank < size; ++rank) {
    const int machine = rank / local_size;
    const int local = rank % local_size;
    for (int peer = 0; peer < local_size; ++peer) edges.emplace_back(rank, machine * local_size + peer);
    for (int step : machine_steps) edges.emplace_back(rank, (machine + step) % machines * local_size + local);
  }
  return edges;
}

// Where each rank sends at one iteration of an inner-outer schedule: local
// rank `outgoing` goes `outer_step` machines ahead; the others go
// `inner_step` places ahead along the ring of their machine's ranks that
// leaves `outgoing` out.
struct InnerOuterStep {
  int local_size;
  int machines;
  int outgoing;
  int outer_step;
  int inner_step;

  int target(int rank) const {
    const int machine = rank / local_size;
    const int local = rank % local_size;
    if (local == outgoing) return (machine + outer_step) % machines * local_size + local;
    // Places are counted from the rank after `outgoing`: 0 .. local_size - 2.
    const int place = (local - outgoing + local_size) % local_size - 1;
    const int target_place = (place + inner_step) % (local_size - 1);
    return machine * local_size + (outgoing + 1 + target_place) % local_size;
  }
};

// GetInnerOuterRingDynamicSendRecvRanks is the exp2 generator with both
// steps fixed at 1, so one schedule serves both: the steps cycle through
// powers of two up to the given exponents.
TopologySchedule inner_outer_schedule(int size, int local_size, int max_outer_exponent, int max_inner_exponent) {
  return [=](int64_t iteration) {
    const InnerOuterStep step{local_size, size / local_size, static_cast<int>(iteration % local_size),
                              cycling_power_of_two(iteration, max_outer_exponent),
                              cycling_power_of_two(iteration, max_inner_exponent)};
    std::vector<Topology::Edge> edges;
    for (int rank = 0; rank < size; ++rank) edges.emplace_back(rank, step.target(rank));
    return Topology::from_edges(size, edges).value();
  };
}

// Out-neighbors by clockwise distance from `rank`, Bluefog's rotation order.
std::vector<int> clockwise_out_neighbors(const Topology& t, int rank) {
  std::vector<int> peers = t.out_neighbors(rank);
  auto distance = [&](int peer) { return (peer - rank + t.size()) % t.size(); };
  std::sort(peers.begin(), peers.end(), [&](int a, int b) { return distance(a) < distance(b); });
  return peers;
}

}  // namespace

Topology Topology::build(int size, absl::Span<const Edge> edges, Weights weights) {
  std::vector<std::set<int>> in(size);
  std::vector<std::set<int>> out(size);
  for (const auto& [from, to] : edges) {
    if (from == to) continue;
    out[from].insert(to);
    in[to].insert(from);
  }
  Topology t;
  t.in_.resize(size);
  t.out_.resize(size);
  t.self_weight_.resize(size);
  for (int i = 0; i < size; ++i) {
    double total = 0;
    for (int j : in[i]) {
      const double w =
          weights == Weights::kMetropolis ? 1.0 / (1 + std::max(in[i].size(), in[j].size())) : 1.0 / (in[i].size() + 1);
      t.in_[i].emplace_back(j, w);
      total += w;
    }
    t.self_weight_[i] = 1.0 - total;
    t.out_[i].assign(out[i].begin(), out[i].end());
  }
  return t;
}

absl::StatusOr<Topology> Topology::from_edges(int size, absl::Span<const Edge> edges) {
  RETURN_IF_ERROR(check_size("directed", size));
  for (const auto& [from, to] : edges) {
    if (std::min(from, to) < 0 || std::max(from, to) >= size) {
      return absl::InvalidArgumentError(
          absl::StrCat("topology edge ", from, " -> ", to, " names a rank outside [0, ", size, ")"));
    }
  }
  return build(size, edges, Weights::kUniform);
}

absl::StatusOr<Topology> Topology::exponential_two(int size) {
  RETURN_IF_ERROR(check_size("exponential-2", size));
  std::vector<Edge> edges;
  for (int i = 0; i < size; ++i) {
    for (int step : powers_of_two_below(size)) edges.emplace_back(i, (i + step) % size);
  }
  return build(size, edges, Weights::kUniform);
}

absl::StatusOr<Topology> Topology::ring(int size) {
  RETURN_IF_ERROR(check_size("ring", size));
  std::vector<Edge> edges;
  for (int i = 0; i < size; ++i) {
    edges.emplace_back(i, (i + 1) % size);
    edges.emplace_back((i + 1) % size, i);
  }
  return build(size, edges, Weights::kMetropolis);
}

absl::StatusOr<Topology> Topology::mesh(int size) {
  RETURN_IF_ERROR(check_size("mesh", size));
  int rows = static_cast<int>(std::sqrt(static_cast<double>(size)));
  while (size % rows != 0) --rows;
  const int cols = size / rows;
  std::vector<Edge> edges;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const int i = r * cols + c;
      if (c + 1 < cols) {
        edges.emplace_back(i, i + 1);
        edges.emplace_back(i + 1, i);
      }
      if (r + 1 < rows) {
        edges.emplace_back(i, i + cols);
        edges.emplace_back(i + cols, i);
      }
    }
  }
  return build(size, edges, Weights::kMetropolis);
}

absl::StatusOr<Topology> Topology::fully_connected(int size) {
  RETURN_IF_ERROR(check_size("fully connected", size));
  std::vector<Edge> edges;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) edges.emplace_back(i, j);
  }
  return build(size, edges, Weights::kUniform);
}

// StarGraph's weights are the Metropolis-Hastings ones of the star: every
// edge touches the center of degree size - 1, so each weighs 1/size.
absl::StatusOr<Topology> Topology::star(int size) {
  RETURN_IF_ERROR(check_size("star", size));
  std::vector<Edge> edges;
  for (int i = 1; i < size; ++i) {
    edges.emplace_back(0, i);
    edges.emplace_back(i, 0);
  }
  return build(size, edges, Weights::kMetropolis);
}

// Bluefog scales the 0/1 adjacency matrix (self included) by its row sums,
// which are all equal here: 1/(in-degree + 1) on every edge, a doubly
// stochastic matrix.
absl::StatusOr<Topology> Topology::inner_outer_ring(int size, int local_size) {
  RETURN_IF_ERROR(check_machines("inner-outer ring topology", size, local_size));
  return build(size, inner_outer_edges(size, local_size, {1}), Weights::kUniform);
}

absl::StatusOr<Topology> Topology::inner_outer_exp2(int size, int local_size) {
  RETURN_IF_ERROR(check_machines("inner-outer exponential-2 topology", size, local_size));
  return build(size, inner_outer_edges(size, local_size, powers_of_two_below(size / local_size)), Weights::kUniform);
}

absl::StatusOr<TopologySchedule> one_peer_schedule(const Topology& base) {
  const int size = base.size();
  if (size == 1) return TopologySchedule([base](int64_t) { return base; });
  std::vector<std::vector<int>> clockwise(size);
  for (int rank = 0; rank < size; ++rank) {
    if (base.out_neighbors(rank).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("one_peer_schedule: rank ", rank, " of ", size, " has no out-neighbor to send to"));
    }
    clockwise[rank] = clockwise_out_neighbors(base, rank);
  }
  return TopologySchedule([size, clockwise = std::move(clockwise)](int64_t iteration) {
    std::vector<Topology::Edge> edges;
    for (int rank = 0; rank < size; ++rank) {
      const std::vector<int>& peers = clockwise[rank];
      edges.emplace_back(rank, peers[static_cast<size_t>(iteration) % peers.size()]);
    }
    return Topology::from_edges(size, edges).value();
  });
}

absl::StatusOr<TopologySchedule> inner_outer_ring_schedule(int size, int local_size) {
  RETURN_IF_ERROR(check_inner_outer_schedule("inner_outer_ring_schedule", size, local_size));
  return inner_outer_schedule(size, local_size, /*max_outer_exponent=*/0, /*max_inner_exponent=*/0);
}

// As in Bluefog, the outer step cycles with the iteration, not with the
// rank's own turns: with 16 machines of 4, local rank 1 always goes 2 ahead.
absl::StatusOr<TopologySchedule> inner_outer_exp2_schedule(int size, int local_size) {
  RETURN_IF_ERROR(check_inner_outer_schedule("inner_outer_exp2_schedule", size, local_size));
  return inner_outer_schedule(size, local_size, floor_log2(size / local_size - 1), floor_log2(local_size - 2));
}

absl::StatusOr<int> uniform_machine_size(absl::Span<const int> local_sizes, absl::Span<const int> local_ranks) {
  if (local_sizes.empty() || local_sizes.size() != local_ranks.size()) {
    return absl::InvalidArgumentError(absl::StrCat("uniform_machine_size: ", local_sizes.size(), " local sizes and ",
                                                   local_ranks.size(), " local ranks"));
  }
  const int size = static_cast<int>(local_sizes.size());
  const int per_machine = local_sizes[0];
  RETURN_IF_ERROR(check_machines("uniform_machine_size", size, per_machine));
  for (int rank = 0; rank < size; ++rank) {
    if (local_sizes[rank] != per_machine || local_ranks[rank] != rank % per_machine) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank ", rank, " is local rank ", local_ranks[rank], " of ", local_sizes[rank],
                       " on its machine, but the inner-outer topologies need every machine to hold ", per_machine,
                       " consecutive ranks as rank 0's does (mpirun --map-by slot, not node); "
                       "--local_size=N takes the machines to be blocks of N consecutive ranks"));
    }
  }
  return per_machine;
}

}  // namespace ts::collectives
