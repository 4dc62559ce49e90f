// Communication graphs for decentralized training, as Bluefog defines them:
// for each rank, the in-neighbors it averages with (and their weights), its
// own weight, and the out-neighbors it sends to. Every graph here has a
// doubly stochastic weight matrix, so repeated neighbor averaging converges
// to the global average.
#pragma once

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ts::collectives {

class Topology {
 public:
  // Rank i sends to i + 2^k (mod size) for every 2^k < size; weights
  // 1/(in-degree + 1), self included.
  static absl::StatusOr<Topology> exponential_two(int size);
  // Each rank with both ring neighbors (one when size is 2).
  static absl::StatusOr<Topology> ring(int size);
  // A rows x cols grid, rows the largest divisor of size up to sqrt(size),
  // 4-neighborhoods, Metropolis-Hastings weights.
  static absl::StatusOr<Topology> mesh(int size);
  static absl::StatusOr<Topology> fully_connected(int size);

  int size() const { return static_cast<int>(self_weight_.size()); }
  // (source rank, weight) pairs, sources ascending.
  const std::vector<std::pair<int, double>>& in_neighbors(int rank) const { return in_[rank]; }
  const std::vector<int>& out_neighbors(int rank) const { return out_[rank]; }
  double self_weight(int rank) const { return self_weight_[rank]; }

 private:
  // Directed edges from -> to; uniform weights 1/(in-degree + 1) when
  // `metropolis` is false, else w_ij = 1/(1 + max(deg_i, deg_j)) (the graph
  // must be undirected).
  static Topology from_edges(int size, const std::vector<std::pair<int, int>>& edges, bool metropolis);

  std::vector<std::vector<std::pair<int, double>>> in_;
  std::vector<std::vector<int>> out_;
  std::vector<double> self_weight_;
};

}  // namespace ts::collectives
