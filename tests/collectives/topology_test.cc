// The graphs' neighbors and weights: Bluefog's exponential-2 neighbors, and
// weight matrices that are doubly stochastic (so averaging converges to the
// global mean) for every graph and size.
#include "collectives/topology.h"

#include <vector>

#include "gtest/gtest.h"

namespace ts::collectives {
namespace {

std::vector<int> sources(const Topology& t, int rank) {
  std::vector<int> out;
  for (const auto& [source, weight] : t.in_neighbors(rank)) out.push_back(source);
  return out;
}

TEST(Topology, ExponentialTwoNeighbors) {
  const Topology t = *Topology::exponential_two(8);
  EXPECT_EQ(t.out_neighbors(0), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(sources(t, 0), (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(t.out_neighbors(5), (std::vector<int>{1, 6, 7}));
  EXPECT_DOUBLE_EQ(t.self_weight(0), 0.25);
  EXPECT_DOUBLE_EQ(t.in_neighbors(0)[0].second, 0.25);
}

TEST(Topology, RingMeshAndFullNeighbors) {
  EXPECT_EQ(sources(*Topology::ring(5), 0), (std::vector<int>{1, 4}));
  EXPECT_EQ(sources(*Topology::ring(2), 0), (std::vector<int>{1}));
  // 6 ranks: a 2 x 3 grid; rank 4 (row 1, col 1) touches 1, 3 and 5.
  EXPECT_EQ(sources(*Topology::mesh(6), 4), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(sources(*Topology::fully_connected(3), 1), (std::vector<int>{0, 2}));
  EXPECT_FALSE(Topology::ring(0).ok());
}

TEST(Topology, WeightsAreDoublyStochastic) {
  for (int size = 1; size <= 12; ++size) {
    for (const auto& make :
         {&Topology::exponential_two, &Topology::ring, &Topology::mesh, &Topology::fully_connected}) {
      const Topology t = *make(size);
      std::vector<double> column(size, 0);
      for (int i = 0; i < size; ++i) {
        double row = t.self_weight(i);
        column[i] += t.self_weight(i);
        EXPECT_GT(t.self_weight(i), 0) << "size " << size << " rank " << i;
        for (const auto& [j, w] : t.in_neighbors(i)) {
          row += w;
          column[j] += w;
          // Rank j sends to i exactly when i lists j as a source.
          const std::vector<int>& out = t.out_neighbors(j);
          EXPECT_NE(std::find(out.begin(), out.end(), i), out.end());
        }
        EXPECT_NEAR(row, 1.0, 1e-12) << "size " << size << " rank " << i;
      }
      for (int j = 0; j < size; ++j) EXPECT_NEAR(column[j], 1.0, 1e-12) << "size " << size << " col " << j;
    }
  }
}

}  // namespace
}  // namespace ts::collectives
