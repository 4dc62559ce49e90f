// Bluefog's decentralized ops under mpirun: one neighbor_allreduce step equals
// the weighted average of the in-neighbors' inputs; repeated steps on the
// exponential-2 graph converge to the global average; the hierarchical form
// on fake machines; ATC and DGD steps on a quadratic reach the global optimum;
// the fused step equals one step per tensor for every combine; the one-peer
// dynamic schedule reaches the average.
#include "collectives/neighbor.h"

#include <bit>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using mpitest::rank_rng;
using mpitest::world;
using ::ts::testing::expect_close;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;
using ::ts::testing::tolerance;
using ::ts::testing::value_or_die;

Tensor input_of(int q, int64_t n, DType dtype, uint64_t salt) {
  std::mt19937_64 rng = rank_rng(q, salt);
  return ::ts::testing::random_tensor(rng, {n}, dtype, -1, 1);
}

Ref mean_of_inputs(int64_t n, uint64_t salt) {
  Ref mean{{n}, std::vector<double>(n, 0)};
  for (int q = 0; q < world().world_size(); ++q) {
    const Ref r = ref_of(input_of(q, n, DType::kF64, salt));
    for (int64_t i = 0; i < n; ++i) mean.v[i] += r.v[i] / world().world_size();
  }
  return mean;
}

TEST(NeighborAllreduce, OneStepIsTheWeightedAverageOfInNeighbors) {
  const Topology t = *Topology::exponential_two(world().world_size());
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    const int64_t n = 1001;
    ASSERT_OK_AND_ASSIGN(Tensor out, neighbor_allreduce(world(), input_of(world().rank(), n, dtype, 1), t));
    Ref expected = ref_of(input_of(world().rank(), n, dtype, 1));
    for (double& v : expected.v) v *= t.self_weight(world().rank());
    for (const auto& [q, w] : t.in_neighbors(world().rank())) {
      const Ref r = ref_of(input_of(q, n, dtype, 1));
      for (int64_t i = 0; i < n; ++i) expected.v[i] += w * r.v[i];
    }
    expect_close(out, expected, ::ts::testing::tolerance(dtype), 1.0, std::string(dtype_name(dtype)));
  }
}

TEST(NeighborAllreduce, ExponentialTwoConvergesToTheGlobalAverage) {
  const Topology t = *Topology::exponential_two(world().world_size());
  Tensor x = input_of(world().rank(), 257, DType::kF64, 2);
  for (int step = 0; step < 60; ++step) {
    ASSERT_OK_AND_ASSIGN(x, neighbor_allreduce(world(), x, t));
  }
  expect_close(x, mean_of_inputs(257, 2), 1e-9, 1.0, "after 60 steps");
}

TEST(NeighborAllreduce, MismatchedTopologyIsAnError) {
  ::ts::testing::expect_error(
      neighbor_allreduce(world(), ones({2}), *Topology::ring(world().world_size() + 1)).status(),
      absl::StatusCode::kInvalidArgument, {"neighbor_allreduce", "topology of"});
}

// Fake machines of two ranks each (one rank each for worlds of 2 and 3).
int ranks_per_fake_machine() { return world().world_size() >= 4 ? 2 : 1; }

TEST(HierarchicalNeighborAllreduce, AveragesMachinesThenMixesThem) {
  const int p = world().world_size();
  const int per_machine = ranks_per_fake_machine();
  const int machines = p / per_machine;
  ASSERT_OK_AND_ASSIGN(MachineComms comms, split_by_machine(world(), world().rank() / per_machine));
  EXPECT_EQ(comms.local->world_size(), per_machine);
  EXPECT_EQ(comms.cross->world_size(), machines);
  const Topology machine_graph = *Topology::ring(machines);
  ASSERT_OK_AND_ASSIGN(
      Tensor out, hierarchical_neighbor_allreduce(comms, input_of(world().rank(), 99, DType::kF64, 3), machine_graph));
  auto machine_mean = [&](int m) {
    Ref mean{{99}, std::vector<double>(99, 0)};
    for (int q = m * per_machine; q < (m + 1) * per_machine; ++q) {
      const Ref r = ref_of(input_of(q, 99, DType::kF64, 3));
      for (int i = 0; i < 99; ++i) mean.v[i] += r.v[i] / per_machine;
    }
    return mean;
  };
  const int me = world().rank() / per_machine;
  Ref expected = machine_mean(me);
  for (double& v : expected.v) v *= machine_graph.self_weight(me);
  for (const auto& [m, w] : machine_graph.in_neighbors(me)) {
    const Ref r = machine_mean(m);
    for (int i = 0; i < 99; ++i) expected.v[i] += w * r.v[i];
  }
  expect_close(out, expected, 1e-12, 1.0, "hierarchical");
  // A channels-last input (an activation-shaped tensor) mixes as its
  // row-major twin does.
  const Tensor image = input_of(world().rank(), 24, DType::kF64, 4).view({2, 3, 2, 2});
  ASSERT_OK_AND_ASSIGN(Tensor row_major, hierarchical_neighbor_allreduce(comms, image, machine_graph));
  ASSERT_OK_AND_ASSIGN(Tensor channels_last, hierarchical_neighbor_allreduce(
                                                 comms, contiguous(image, MemoryFormat::kChannelsLast), machine_graph));
  expect_close(channels_last, ref_of(row_major), 0, 0, "hierarchical, channels-last");
  ASSERT_OK_AND_ASSIGN(int machine, machine_index(world(), Device::cpu()));
  EXPECT_EQ(machine, 0);  // every rank runs on this machine
}

// f_r(x) = |x - b_r|^2 / 2: the optimum of the sum is the mean of the b_r.
void expect_reaches_global_optimum(DecentralizedStyle style) {
  const int p = world().world_size();
  const Topology t = *Topology::exponential_two(p);
  constexpr int64_t kN = 33;
  constexpr int kSteps = 300;
  constexpr double kLr = 0.1;
  const Tensor b = input_of(world().rank(), kN, DType::kF64, 4);
  Tensor x = zeros({kN}, {DType::kF64});
  Tensor y = zeros({2, 2}, {DType::kF64});  // a second parameter, target 0
  for (int step = 0; step < kSteps; ++step) {
    Tensor gx = x - b;
    Tensor gy = clone(y);
    ASSERT_OK(decentralized_step({x, y}, {gx, gy}, kLr, style, neighbor_combine(world(), t)));
  }
  // The same recursion, run centrally over every rank's b.
  std::vector<Ref> bs;
  for (int q = 0; q < p; ++q) bs.push_back(ref_of(input_of(q, kN, DType::kF64, 4)));
  std::vector<std::vector<double>> xs(p, std::vector<double>(kN, 0));
  auto mix = [&](const std::vector<std::vector<double>>& v) {
    std::vector<std::vector<double>> out(p, std::vector<double>(kN, 0));
    for (int i = 0; i < p; ++i) {
      for (int64_t k = 0; k < kN; ++k) out[i][k] = t.self_weight(i) * v[i][k];
      for (const auto& [j, w] : t.in_neighbors(i)) {
        for (int64_t k = 0; k < kN; ++k) out[i][k] += w * v[j][k];
      }
    }
    return out;
  };
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::vector<double>> next = xs;
    if (style == DecentralizedStyle::kAtc) {
      for (int i = 0; i < p; ++i) {
        for (int64_t k = 0; k < kN; ++k) next[i][k] -= kLr * (xs[i][k] - bs[i].v[k]);
      }
      xs = mix(next);
    } else {
      next = mix(xs);
      for (int i = 0; i < p; ++i) {
        for (int64_t k = 0; k < kN; ++k) next[i][k] -= kLr * (xs[i][k] - bs[i].v[k]);
      }
      xs = next;
    }
  }
  expect_close(x, Ref{{kN}, xs[world().rank()]}, 1e-9, 1.0, "the central recursion");
  expect_close(y, Ref{{2, 2}, std::vector<double>(4, 0)}, 1e-9, 1.0, "second parameter");
  // The ranks' average follows gradient descent on the mean objective.
  Tensor mean = clone(x);
  ASSERT_OK(world().allreduce(mean, ReduceOp::kAvg).wait());
  expect_close(mean, mean_of_inputs(kN, 4), 1e-9, 1.0, "average of the ranks' parameters");
}

TEST(DecentralizedStep, AtcReachesTheGlobalOptimum) { expect_reaches_global_optimum(DecentralizedStyle::kAtc); }
TEST(DecentralizedStep, DgdReachesTheGlobalOptimum) { expect_reaches_global_optimum(DecentralizedStyle::kDgd); }

// Parameters of mixed shapes and dtypes, the f32 ones split by others so the
// fusion buffers are gathered and scattered out of order, and their
// gradients; different on every rank.
struct Parameters {
  std::vector<Tensor> values;
  std::vector<Tensor> grads;
};
Parameters mixed_parameters(uint64_t salt) {
  std::mt19937_64 rng = rank_rng(world().rank(), salt);
  const std::vector<std::pair<std::vector<int64_t>, DType>> specs = {
      {{3, 4}, DType::kF32},    {{7}, DType::kF64},  {{}, DType::kF32},
      {{2, 1, 3}, DType::kF32}, {{6}, DType::kBF16}, {{5}, DType::kF32},
  };
  Parameters out;
  for (const auto& [shape, dtype] : specs) {
    out.values.push_back(::ts::testing::random_tensor(rng, shape, dtype, -1, 1));
    out.grads.push_back(::ts::testing::random_tensor(rng, shape, dtype, -1, 1));
  }
  return out;
}

// The step as it was before fusion: one combine per parameter.
std::vector<Tensor> per_tensor_step(const Parameters& p, double lr, DecentralizedStyle style, const Combine& combine) {
  std::vector<Tensor> next;
  for (size_t i = 0; i < p.values.size(); ++i) {
    const Tensor step = p.grads[i] * lr;
    next.push_back(style == DecentralizedStyle::kAtc ? value_or_die(combine(p.values[i] - step))
                                                     : value_or_die(combine(p.values[i])) - step);
  }
  return next;
}

TEST(DecentralizedStep, FusedStepEqualsOneStepPerTensor) {
  const int p = world().world_size();
  ASSERT_OK_AND_ASSIGN(MachineComms machines, split_by_machine(world(), world().rank() / ranks_per_fake_machine()));
  const std::vector<std::pair<std::string, Combine>> combines = {
      {"neighbor", neighbor_combine(world(), *Topology::exponential_two(p))},
      {"hierarchical", hierarchical_combine(machines, *Topology::ring(machines.cross->world_size()))},
      {"allreduce", allreduce_combine(world())},
  };
  for (const auto& [name, combine] : combines) {
    for (DecentralizedStyle style : {DecentralizedStyle::kAtc, DecentralizedStyle::kDgd}) {
      const std::string what = name + (style == DecentralizedStyle::kAtc ? " ATC" : " DGD");
      const Parameters params = mixed_parameters(5);
      const std::vector<Tensor> expected = per_tensor_step(params, 0.1, style, combine);
      ASSERT_OK(decentralized_step(params.values, params.grads, 0.1, style, combine));
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(params.values[i].shape(), expected[i].shape()) << what;
        expect_close(params.values[i], ref_of(expected[i]), tolerance(expected[i].dtype()), 1.0,
                     what + " parameter " + std::to_string(i));
      }
    }
  }
}

TEST(DecentralizedStep, AllreduceCombineIsTheGlobalAverage) {
  ASSERT_OK_AND_ASSIGN(Tensor mean, allreduce_combine(world())(input_of(world().rank(), 31, DType::kF64, 6)));
  expect_close(mean, mean_of_inputs(31, 6), 1e-12, 1.0, "allreduce_combine");
}

// Bluefog's benchmark default on one machine: one peer per iteration of the
// exponential-2 graph. On 2^k ranks the average is exact after k iterations;
// on others it converges geometrically.
TEST(DecentralizedStep, OnePeerExponentialTwoScheduleReachesTheAverage) {
  const int p = world().world_size();
  ASSERT_OK_AND_ASSIGN(const TopologySchedule schedule, one_peer_schedule(*Topology::exponential_two(p)));
  const auto ranks = static_cast<unsigned>(p);
  const int iterations = std::has_single_bit(ranks) ? std::bit_width(ranks) - 1 : 60;
  Tensor x = input_of(world().rank(), 65, DType::kF64, 7);
  const Tensor no_gradient = zeros({65}, {DType::kF64});
  for (int k = 0; k < iterations; ++k) {
    ASSERT_OK(
        decentralized_step({x}, {no_gradient}, 0.1, DecentralizedStyle::kDgd, neighbor_combine(world(), schedule(k))));
  }
  expect_close(x, mean_of_inputs(65, 7), 1e-12, 1.0, std::to_string(iterations) + " iterations");
}

TEST(DecentralizedStep, MismatchedArgumentsAreErrors) {
  const Combine combine = neighbor_combine(world(), *Topology::ring(world().world_size()));
  const Tensor p = zeros({3});
  ::ts::testing::expect_error(decentralized_step({p}, {}, 0.1, DecentralizedStyle::kAtc, combine),
                              absl::StatusCode::kInvalidArgument, {"1 parameters but 0 gradients"});
  ::ts::testing::expect_error(decentralized_step({p}, {zeros({4})}, 0.1, DecentralizedStyle::kDgd, combine),
                              absl::StatusCode::kInvalidArgument, {"parameter 0 is f32[3]", "f32[4]"});
  ::ts::testing::expect_error(
      decentralized_step({p}, {zeros({3}, {DType::kF64})}, 0.1, DecentralizedStyle::kDgd, combine),
      absl::StatusCode::kInvalidArgument, {"parameter 0 is f32[3]", "f64[3]"});
  const Combine truncating = [](const Tensor& flat) -> absl::StatusOr<Tensor> { return flat.narrow(0, 0, 1); };
  ::ts::testing::expect_error(
      decentralized_step({p, zeros({2})}, {zeros({3}), zeros({2})}, 0.1, DecentralizedStyle::kDgd, truncating),
      absl::StatusCode::kInvalidArgument, {"combine returned f32[1]", "f32[5]"});
}

}  // namespace
}  // namespace ts::collectives
