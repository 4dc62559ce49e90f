// neighbor_bench's flag vocabulary (Bluefog's names, horovod as an alias),
// validation messages, and the topologies the names build.
#include "tasks/neighbor_bench/options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ts::tasks::neighbor_bench {
namespace {

using ::testing::HasSubstr;

TEST(OptionsTest, NamesRoundTrip) {
  for (const char* name :
       {"neighbor_allreduce", "hierarchical_neighbor_allreduce", "allreduce", "gradient_allreduce"}) {
    EXPECT_EQ(dist_optimizer_name(parse_dist_optimizer(name).value()), name);
  }
  EXPECT_EQ(parse_dist_optimizer("horovod").value(), DistOptimizer::kGradientAllreduce);
  for (const char* name : {"power2", "ring", "mesh", "star", "inner_outer_ring", "inner_outer_exp2"}) {
    EXPECT_EQ(topology_kind_name(parse_topology_kind(name).value()), name);
  }
  EXPECT_EQ(parse_style("atc").value(), Style::kAtc);
  EXPECT_EQ(style_name(Style::kDgd), "dgd");
}

TEST(OptionsTest, UnknownNamesListTheKnownOnes) {
  EXPECT_THAT(parse_topology_kind("torus").status().message(),
              HasSubstr("--virtual_topology: unknown value 'torus' (known: power2, ring, mesh, star"));
  EXPECT_THAT(parse_dist_optimizer("win_put").status().message(), HasSubstr("--dist_optimizer: unknown value"));
  EXPECT_THAT(parse_style("cta").status().message(), HasSubstr("(known: atc, dgd)"));
}

TEST(OptionsTest, Validation) {
  EXPECT_TRUE(validate(BenchOptions{}).ok());
  BenchOptions o;
  o.model = "lenet";
  EXPECT_THAT(validate(o).message(), HasSubstr("unknown model 'lenet'"));
  o = {};
  o.num_iters = 0;
  EXPECT_THAT(validate(o).message(), HasSubstr("--num_iters=0: must be >= 1"));
  o = {};
  o.num_warmup_batches = 0;
  EXPECT_TRUE(validate(o).ok());
  o.image_size = 16;
  EXPECT_THAT(validate(o).message(), HasSubstr("--image_size=16"));
  o = {};
  o.local_size = 0;
  EXPECT_THAT(validate(o).message(), HasSubstr("--local_size=0"));
}

TEST(OptionsTest, TopologiesByName) {
  EXPECT_EQ(make_topology(TopologyKind::kPower2, 8, 8).value().out_neighbors(0), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(make_topology(TopologyKind::kStar, 4, 4).value().out_neighbors(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(make_topology(TopologyKind::kInnerOuterRing, 8, 4).value().size(), 8);
  // Machines of local_size ranks must tile the world.
  EXPECT_FALSE(make_topology(TopologyKind::kInnerOuterExp2, 6, 4).ok());
}

}  // namespace
}  // namespace ts::tasks::neighbor_bench
