#include "collectives/topology.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"

namespace ts::collectives {

namespace {

absl::Status check_size(absl::string_view graph, int size) {
  if (size < 1) return absl::InvalidArgumentError(absl::StrCat(graph, " topology of ", size, " ranks"));
  return absl::OkStatus();
}

}  // namespace

Topology Topology::from_edges(int size, const std::vector<std::pair<int, int>>& edges, bool metropolis) {
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
      const double w = metropolis ? 1.0 / (1 + std::max(in[i].size(), in[j].size())) : 1.0 / (in[i].size() + 1);
      t.in_[i].emplace_back(j, w);
      total += w;
    }
    t.self_weight_[i] = 1.0 - total;
    t.out_[i].assign(out[i].begin(), out[i].end());
  }
  return t;
}

absl::StatusOr<Topology> Topology::exponential_two(int size) {
  if (absl::Status s = check_size("exponential-2", size); !s.ok()) return s;
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < size; ++i) {
    for (int step = 1; step < size; step *= 2) edges.emplace_back(i, (i + step) % size);
  }
  return from_edges(size, edges, /*metropolis=*/false);
}

absl::StatusOr<Topology> Topology::ring(int size) {
  if (absl::Status s = check_size("ring", size); !s.ok()) return s;
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < size; ++i) {
    edges.emplace_back(i, (i + 1) % size);
    edges.emplace_back((i + 1) % size, i);
  }
  return from_edges(size, edges, /*metropolis=*/true);
}

absl::StatusOr<Topology> Topology::mesh(int size) {
  if (absl::Status s = check_size("mesh", size); !s.ok()) return s;
  int rows = static_cast<int>(std::sqrt(static_cast<double>(size)));
  while (size % rows != 0) --rows;
  const int cols = size / rows;
  std::vector<std::pair<int, int>> edges;
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
  return from_edges(size, edges, /*metropolis=*/true);
}

absl::StatusOr<Topology> Topology::fully_connected(int size) {
  if (absl::Status s = check_size("fully connected", size); !s.ok()) return s;
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) edges.emplace_back(i, j);
  }
  return from_edges(size, edges, /*metropolis=*/false);
}

}  // namespace ts::collectives
