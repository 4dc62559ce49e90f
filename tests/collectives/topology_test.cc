// The graphs' neighbors and weights, worked out by hand from Bluefog's
// topology_util.py (its static graphs and its dynamic generators, iteration
// by iteration); weight matrices that are doubly stochastic (so averaging
// converges to the global mean) for every static graph and size; clear
// errors for sizes Bluefog rejects.
#include "collectives/topology.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

std::vector<int> sources(const Topology& t, int rank) {
  std::vector<int> out;
  for (const auto& [source, weight] : t.in_neighbors(rank)) out.push_back(source);
  return out;
}

// The one rank each rank sends to, in a graph of a one-peer schedule.
std::vector<int> send_targets(const Topology& t) {
  std::vector<int> targets;
  for (int rank = 0; rank < t.size(); ++rank) {
    EXPECT_EQ(t.out_neighbors(rank).size(), 1u) << "rank " << rank;
    targets.push_back(t.out_neighbors(rank).empty() ? -1 : t.out_neighbors(rank)[0]);
  }
  return targets;
}

// Rows sum to 1 with a positive self weight, and j sends to i exactly when i
// lists j as a source.
void expect_row_stochastic(const Topology& t, const std::string& what) {
  for (int i = 0; i < t.size(); ++i) {
    double row = t.self_weight(i);
    EXPECT_GT(t.self_weight(i), 0) << what << " rank " << i;
    for (const auto& [j, w] : t.in_neighbors(i)) {
      row += w;
      const std::vector<int>& out = t.out_neighbors(j);
      EXPECT_NE(std::find(out.begin(), out.end(), i), out.end()) << what << ": " << j << " -> " << i;
    }
    EXPECT_NEAR(row, 1.0, 1e-12) << what << " row " << i;
  }
  int edges = 0;
  for (int i = 0; i < t.size(); ++i) edges += static_cast<int>(t.out_neighbors(i).size() - t.in_neighbors(i).size());
  EXPECT_EQ(edges, 0) << what << ": out-edges without a matching in-edge";
}

void expect_doubly_stochastic(const Topology& t, const std::string& what) {
  expect_row_stochastic(t, what);
  std::vector<double> column(t.size(), 0);
  for (int i = 0; i < t.size(); ++i) {
    column[i] += t.self_weight(i);
    for (const auto& [j, w] : t.in_neighbors(i)) column[j] += w;
  }
  for (int j = 0; j < t.size(); ++j) EXPECT_NEAR(column[j], 1.0, 1e-12) << what << " column " << j;
}

void expect_same_graph(const Topology& a, const Topology& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (int i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.in_neighbors(i), b.in_neighbors(i)) << what << " rank " << i;
    EXPECT_EQ(a.out_neighbors(i), b.out_neighbors(i)) << what << " rank " << i;
    EXPECT_DOUBLE_EQ(a.self_weight(i), b.self_weight(i)) << what << " rank " << i;
  }
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
}

// StarGraph(4): W[i][i] = 3/4 for the leaves, W[0][0] = 1/4, 1/4 each way on
// every edge.
TEST(Topology, StarOfFour) {
  const Topology t = *Topology::star(4);
  EXPECT_EQ(t.out_neighbors(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sources(t, 0), (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(t.self_weight(0), 0.25);
  for (const auto& [leaf, w] : t.in_neighbors(0)) EXPECT_DOUBLE_EQ(w, 0.25) << "leaf " << leaf;
  for (int leaf = 1; leaf < 4; ++leaf) {
    EXPECT_EQ(t.out_neighbors(leaf), (std::vector<int>{0})) << "leaf " << leaf;
    ASSERT_EQ(t.in_neighbors(leaf).size(), 1u) << "leaf " << leaf;
    EXPECT_EQ(t.in_neighbors(leaf)[0], (std::pair<int, double>{0, 0.25})) << "leaf " << leaf;
    EXPECT_DOUBLE_EQ(t.self_weight(leaf), 0.75) << "leaf " << leaf;
  }
}

// InnerOuterRingGraph(8, 4): machines {0..3} and {4..7}. Rank 5 (machine 1,
// local rank 1) hears its machine and rank 1 (the ring's step from machine
// 0); with two machines the ring runs both ways. 5 nonzeros a row: 1/5 each.
TEST(Topology, InnerOuterRingOfTwoMachines) {
  const Topology t = *Topology::inner_outer_ring(8, 4);
  EXPECT_EQ(sources(t, 5), (std::vector<int>{1, 4, 6, 7}));
  EXPECT_EQ(t.out_neighbors(5), (std::vector<int>{1, 4, 6, 7}));
  EXPECT_EQ(sources(t, 0), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(t.self_weight(5), 0.2);
  for (const auto& [source, w] : t.in_neighbors(5)) EXPECT_DOUBLE_EQ(w, 0.2) << "source " << source;
}

// With three machines the outer ring is one-way: rank 5 hears rank 1
// (machine 0) and sends to rank 9 (machine 2).
TEST(Topology, InnerOuterRingOfThreeMachinesIsDirected) {
  const Topology t = *Topology::inner_outer_ring(12, 4);
  EXPECT_EQ(sources(t, 5), (std::vector<int>{1, 4, 6, 7}));
  EXPECT_EQ(t.out_neighbors(5), (std::vector<int>{4, 6, 7, 9}));
}

// InnerOuterExpo2Graph: with two machines the only machine distance is 1, so
// (8, 4) is the inner-outer ring. With 5 machines the distances are 1, 2, 4:
// rank 5 (machine 1) hears machines 0, 4, 2 (ranks 1, 17, 9) and sends to
// machines 2, 3, 0 (ranks 9, 13, 1); 7 nonzeros a row.
TEST(Topology, InnerOuterExp2) {
  expect_same_graph(*Topology::inner_outer_exp2(8, 4), *Topology::inner_outer_ring(8, 4), "exp2 vs ring, 8 / 4");
  const Topology t = *Topology::inner_outer_exp2(20, 4);
  EXPECT_EQ(sources(t, 5), (std::vector<int>{1, 4, 6, 7, 9, 17}));
  EXPECT_EQ(t.out_neighbors(5), (std::vector<int>{1, 4, 6, 7, 9, 13}));
  EXPECT_NEAR(t.self_weight(5), 1.0 / 7, 1e-12);  // 1 minus the neighbors' weights
  for (const auto& [source, w] : t.in_neighbors(5)) EXPECT_DOUBLE_EQ(w, 1.0 / 7) << "source " << source;
}

// One rank per machine leaves only the outer graph; one machine only the
// inner, fully connected one.
TEST(Topology, InnerOuterLimits) {
  for (int size = 1; size <= 12; ++size) {
    const std::string n = std::to_string(size);
    expect_same_graph(*Topology::inner_outer_exp2(size, 1), *Topology::exponential_two(size), "exp2 " + n + " / 1");
    expect_same_graph(*Topology::inner_outer_ring(size, size), *Topology::fully_connected(size), "ring " + n);
    expect_same_graph(*Topology::inner_outer_exp2(size, size), *Topology::fully_connected(size), "exp2 " + n);
  }
}

// Bluefog's static graphs are all doubly stochastic, the new ones included.
TEST(Topology, WeightsAreDoublyStochastic) {
  for (int size = 1; size <= 12; ++size) {
    for (const auto& make :
         {&Topology::exponential_two, &Topology::ring, &Topology::mesh, &Topology::fully_connected, &Topology::star}) {
      expect_doubly_stochastic(*make(size), "size " + std::to_string(size));
    }
    for (int local_size = 1; local_size <= size; ++local_size) {
      if (size % local_size != 0) continue;
      const std::string what = std::to_string(size) + " / " + std::to_string(local_size);
      expect_doubly_stochastic(*Topology::inner_outer_ring(size, local_size), "inner-outer ring " + what);
      expect_doubly_stochastic(*Topology::inner_outer_exp2(size, local_size), "inner-outer exp2 " + what);
    }
  }
}

// Uniform weights over whoever sends: rank 1 hears 0 and 2 (1/3 each), the
// others nobody. Column 1 sums to 1/3, so such graphs are row stochastic only.
TEST(Topology, FromEdgesAveragesUniformly) {
  const Topology t = *Topology::from_edges(3, {{0, 1}, {2, 1}, {1, 1}});
  EXPECT_EQ(sources(t, 1), (std::vector<int>{0, 2}));
  EXPECT_DOUBLE_EQ(t.self_weight(1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(t.in_neighbors(1)[1].second, 1.0 / 3);
  EXPECT_DOUBLE_EQ(t.self_weight(0), 1.0);
  EXPECT_TRUE(t.out_neighbors(1).empty());
  expect_row_stochastic(t, "from_edges");
}

TEST(Topology, BadSizesAreErrors) {
  expect_error(Topology::ring(0).status(), absl::StatusCode::kInvalidArgument, {"ring topology of 0 ranks"});
  expect_error(Topology::star(-1).status(), absl::StatusCode::kInvalidArgument, {"star topology of -1 ranks"});
  expect_error(Topology::inner_outer_ring(10, 4).status(), absl::StatusCode::kInvalidArgument,
               {"inner-outer ring", "10 ranks", "local_size 4"});
  expect_error(Topology::inner_outer_exp2(8, 0).status(), absl::StatusCode::kInvalidArgument,
               {"inner-outer exponential-2", "8 ranks", "local_size 0"});
  expect_error(Topology::from_edges(3, {{0, 3}}).status(), absl::StatusCode::kInvalidArgument,
               {"edge 0 -> 3", "outside [0, 3)"});
}

// A launch by slot on machines of equal size is what the inner-outer graphs
// take; machines of other sizes, or ranks dealt round the machines, are not.
TEST(UniformMachineSize, ConsecutiveRanksOnEqualMachines) {
  EXPECT_EQ(*uniform_machine_size({3, 3, 3, 3, 3, 3}, {0, 1, 2, 0, 1, 2}), 3);
  EXPECT_EQ(*uniform_machine_size({1}, {0}), 1);
  expect_error(uniform_machine_size({4, 4, 4, 4, 2, 2}, {0, 1, 2, 3, 0, 1}).status(),
               absl::StatusCode::kInvalidArgument, {"6 ranks do not make whole machines of local_size 4"});
  expect_error(uniform_machine_size({2, 2, 4, 4, 4, 4}, {0, 1, 0, 1, 2, 3}).status(),
               absl::StatusCode::kInvalidArgument, {"rank 2 is local rank 0 of 4", "hold 2 consecutive ranks"});
  expect_error(uniform_machine_size({2, 2, 2, 2}, {0, 0, 1, 1}).status(), absl::StatusCode::kInvalidArgument,
               {"rank 1 is local rank 0 of 2", "--local_size=N"});
  expect_error(uniform_machine_size({2, 2}, {0}).status(), absl::StatusCode::kInvalidArgument,
               {"2 local sizes and 1 local ranks"});
}

// GetDynamicOnePeerSendRecvRanks on ExponentialTwoGraph(8): rank r sends to
// r + 1, r + 2, r + 4 in turn and hears the one rank as far behind.
TEST(OnePeerSchedule, ExponentialTwoCyclesThroughItsDistances) {
  const TopologySchedule schedule = *one_peer_schedule(*Topology::exponential_two(8));
  const int distances[] = {1, 2, 4, 1, 2, 4, 1};
  for (int k = 0; k < 7; ++k) {
    const Topology t = schedule(k);
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(t.out_neighbors(r), (std::vector<int>{(r + distances[k]) % 8})) << "iteration " << k;
      EXPECT_EQ(t.in_neighbors(r), (std::vector<std::pair<int, double>>{{(r + 8 - distances[k]) % 8, 0.5}}))
          << "iteration " << k;
    }
    expect_doubly_stochastic(t, "iteration " + std::to_string(k));
  }
}

// On exponential_two(machines) the schedule is
// GetExp2DynamicSendRecvMachineRanks: 5 machines step 1, 2, 4 ahead in turn.
TEST(OnePeerSchedule, MachineExponentialTwoMatchesTheHierarchicalGenerator) {
  const TopologySchedule schedule = *one_peer_schedule(*Topology::exponential_two(5));
  EXPECT_EQ(send_targets(schedule(0)), (std::vector<int>{1, 2, 3, 4, 0}));
  EXPECT_EQ(send_targets(schedule(1)), (std::vector<int>{2, 3, 4, 0, 1}));
  EXPECT_EQ(send_targets(schedule(2)), (std::vector<int>{4, 0, 1, 2, 3}));
  EXPECT_EQ(send_targets(schedule(3)), (std::vector<int>{1, 2, 3, 4, 0}));
}

// Clockwise order on the ring: r + 1 (distance 1), then r - 1 (distance 4).
TEST(OnePeerSchedule, RingAlternatesDirections) {
  const TopologySchedule schedule = *one_peer_schedule(*Topology::ring(5));
  for (int k = 0; k < 4; ++k) {
    const Topology t = schedule(k);
    const int step = k % 2 == 0 ? 1 : 4;
    for (int r = 0; r < 5; ++r) EXPECT_EQ(t.out_neighbors(r), (std::vector<int>{(r + step) % 5})) << "iteration " << k;
  }
}

// The center sends to leaf 1, 2, 3 in turn; every leaf sends to the center.
// With 1/(in-degree + 1) weights (Bluefog's benchmark) the center keeps 1/4
// and the visited leaf 1/2, while the others keep all: rows sum to 1, but
// column 1 sums to 1/2 + 1/4, so this dynamic graph is not doubly stochastic.
TEST(OnePeerSchedule, StarCenterRotatesAndMixesRowStochastically) {
  const TopologySchedule schedule = *one_peer_schedule(*Topology::star(4));
  for (int k = 0; k < 4; ++k) {
    const Topology t = schedule(k);
    const int visited = 1 + k % 3;
    EXPECT_EQ(send_targets(t)[0], visited) << "iteration " << k;
    EXPECT_EQ(sources(t, 0), (std::vector<int>{1, 2, 3})) << "iteration " << k;
    EXPECT_DOUBLE_EQ(t.self_weight(0), 0.25);
    for (int leaf = 1; leaf < 4; ++leaf) {
      EXPECT_EQ(send_targets(t)[leaf], 0);
      EXPECT_DOUBLE_EQ(t.self_weight(leaf), leaf == visited ? 0.5 : 1.0) << "iteration " << k << " leaf " << leaf;
    }
    expect_row_stochastic(t, "iteration " + std::to_string(k));
  }
}

TEST(OnePeerSchedule, OneRankKeepsItsGraph) {
  const Topology t = (*one_peer_schedule(*Topology::ring(1)))(3);
  EXPECT_EQ(t.size(), 1);
  EXPECT_DOUBLE_EQ(t.self_weight(0), 1.0);
}

TEST(OnePeerSchedule, RankWithoutOutNeighborIsAnError) {
  expect_error(one_peer_schedule(*Topology::from_edges(3, {{0, 1}, {1, 0}})).status(),
               absl::StatusCode::kInvalidArgument, {"one_peer_schedule", "rank 2 of 3", "no out-neighbor"});
}

// GetInnerOuterRingDynamicSendRecvRanks(8, 4): at iteration k local rank
// k mod 4 crosses to the other machine; the other three pass along their
// machine's ring, skipping it.
TEST(InnerOuterRingSchedule, EightRanksOnTwoMachines) {
  const TopologySchedule schedule = *inner_outer_ring_schedule(8, 4);
  const std::vector<std::vector<int>> targets = {
      {4, 2, 3, 1, 0, 6, 7, 5},  // local rank 0 crosses; 1 -> 2 -> 3 -> 1
      {2, 5, 3, 0, 6, 1, 7, 4},  // local rank 1 crosses; 0 -> 2 -> 3 -> 0
      {1, 3, 6, 0, 5, 7, 2, 4}, {1, 2, 0, 7, 5, 6, 4, 3}, {4, 2, 3, 1, 0, 6, 7, 5},
  };
  for (int k = 0; k < 5; ++k) EXPECT_EQ(send_targets(schedule(k)), targets[k]) << "iteration " << k;
  // Rank 2 hears rank 1 at iteration 0 and, rank 1 being away, rank 0 at 1.
  EXPECT_EQ(schedule(0).in_neighbors(2), (std::vector<std::pair<int, double>>{{1, 0.5}}));
  EXPECT_EQ(schedule(1).in_neighbors(2), (std::vector<std::pair<int, double>>{{0, 0.5}}));
}

// Three machines: the crossing ranks go one way round, 0 -> 4 -> 8 -> 0.
TEST(InnerOuterRingSchedule, CrossingRanksGoRoundTheMachines) {
  const Topology t = (*inner_outer_ring_schedule(12, 4))(0);
  EXPECT_EQ(send_targets(t)[0], 4);
  EXPECT_EQ(send_targets(t)[4], 8);
  EXPECT_EQ(send_targets(t)[8], 0);
}

// GetInnerOuterExpo2DynamicSendRecvRanks(8, 4): the inner step is 1, 2, 1,
// 2, ... (2^floor(log2(4 - 2)) at most) along the ring that skips the
// crossing rank; the machine step stays 1 with two machines.
TEST(InnerOuterExp2Schedule, EightRanksOnTwoMachines) {
  const TopologySchedule schedule = *inner_outer_exp2_schedule(8, 4);
  const std::vector<std::vector<int>> targets = {
      {4, 2, 3, 1, 0, 6, 7, 5}, {3, 5, 0, 2, 7, 1, 4, 6},  // ring 2, 3, 0 stepped by 2: 0 -> 3 -> 2 -> 0
      {1, 3, 6, 0, 5, 7, 2, 4}, {2, 0, 1, 7, 6, 4, 5, 3}, {4, 2, 3, 1, 0, 6, 7, 5},
  };
  for (int k = 0; k < 5; ++k) EXPECT_EQ(send_targets(schedule(k)), targets[k]) << "iteration " << k;
}

// 5 machines of 4: the machine step cycles 1, 2, 4 with the iteration. At
// iteration 5 local rank 1 crosses 4 machines ahead: 1 -> 17 -> 13, and rank
// 1 hears rank 5.
TEST(InnerOuterExp2Schedule, CrossingRanksJumpPowersOfTwoMachines) {
  const TopologySchedule schedule = *inner_outer_exp2_schedule(20, 4);
  EXPECT_EQ(send_targets(schedule(0))[0], 4);
  const Topology t = schedule(5);
  EXPECT_EQ(send_targets(t)[1], 17);
  EXPECT_EQ(send_targets(t)[17], 13);
  EXPECT_EQ(sources(t, 1), (std::vector<int>{5}));
}

// Every graph of both schedules is a permutation plus self (1/2 each, so
// doubly stochastic) inside the matching static graph, as Bluefog requires of
// a dynamic graph.
TEST(InnerOuterSchedules, EachIterationIsAPermutationInsideTheStaticGraph) {
  for (const auto& [size, local_size] : std::vector<std::pair<int, int>>{{6, 3}, {8, 4}, {12, 3}, {20, 4}, {40, 5}}) {
    const Topology ring = *Topology::inner_outer_ring(size, local_size);
    const Topology exp2 = *Topology::inner_outer_exp2(size, local_size);
    const TopologySchedule ring_schedule = *inner_outer_ring_schedule(size, local_size);
    const TopologySchedule exp2_schedule = *inner_outer_exp2_schedule(size, local_size);
    for (int k = 0; k < 3 * local_size; ++k) {
      const std::string what =
          std::to_string(size) + " / " + std::to_string(local_size) + " iteration " + std::to_string(k);
      for (const auto& [dynamic, base] : {std::pair{ring_schedule(k), ring}, std::pair{exp2_schedule(k), exp2}}) {
        expect_doubly_stochastic(dynamic, what);
        const std::vector<int> targets = send_targets(dynamic);
        for (int r = 0; r < size; ++r) {
          EXPECT_EQ(dynamic.in_neighbors(r).size(), 1u) << what;
          EXPECT_DOUBLE_EQ(dynamic.self_weight(r), 0.5) << what;
          const std::vector<int>& allowed = base.out_neighbors(r);
          EXPECT_NE(std::find(allowed.begin(), allowed.end(), targets[r]), allowed.end()) << what << ": " << r;
        }
      }
    }
  }
}

TEST(InnerOuterSchedules, BadSizesAreErrors) {
  for (const auto& make : {&inner_outer_ring_schedule, &inner_outer_exp2_schedule}) {
    expect_error(make(10, 4).status(), absl::StatusCode::kInvalidArgument, {"10 ranks", "local_size 4"});
    expect_error(make(8, 2).status(), absl::StatusCode::kInvalidArgument, {"local_size 2", "above 2"});
    expect_error(make(4, 4).status(), absl::StatusCode::kInvalidArgument, {"4 ranks", "one machine"});
  }
}

}  // namespace
}  // namespace ts::collectives
