// The rows of a ddp_bench sweep and their labels, against PyTorch's table
// (benchmarks/distributed/ddp/README.md: 1M/1G, 1M/2G, 1M/4G, 1M/8G, 2M/8G, ...).
#include "tasks/ddp_bench/sweep.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ts::tasks::ddp_bench {
namespace {

std::vector<std::string> labels(const std::vector<SweepRow>& rows) {
  std::vector<std::string> out;
  for (const SweepRow& r : rows) out.push_back(r.label);
  return out;
}

TEST(SweepTest, MachineLabels) {
  EXPECT_EQ(machine_label(1, 8), "1M/1G");
  EXPECT_EQ(machine_label(4, 8), "1M/4G");
  EXPECT_EQ(machine_label(8, 8), "1M/8G");
  EXPECT_EQ(machine_label(16, 8), "2M/8G");
  EXPECT_EQ(machine_label(20, 8), "2M/8G+4G");  // a part-filled third machine
}

TEST(SweepTest, EightGpuMachines) {
  const std::vector<SweepRow> rows = plan_sweep(24, 8, true);
  EXPECT_EQ(labels(rows),
            (std::vector<std::string>{"warmup", "no ddp", "1M/1G", "1M/2G", "1M/4G", "1M/8G", "2M/8G", "3M/8G"}));
  EXPECT_TRUE(rows[0].every_rank_alone);
  EXPECT_FALSE(rows[0].reported);
  EXPECT_FALSE(rows[1].ddp);
  EXPECT_EQ(rows[1].world_size, 1);
  for (size_t i = 2; i < rows.size(); ++i) EXPECT_TRUE(rows[i].ddp) << rows[i].label;
  EXPECT_EQ(rows.back().world_size, 24);
}

TEST(SweepTest, PartialLastMachineAndSmallWorlds) {
  EXPECT_EQ(labels(plan_sweep(12, 8, true)),
            (std::vector<std::string>{"warmup", "no ddp", "1M/1G", "1M/2G", "1M/4G", "1M/8G", "1M/8G+4G"}));
  EXPECT_EQ(plan_sweep(12, 8, true).back().world_size, 12);
  EXPECT_EQ(labels(plan_sweep(2, 2, true)), (std::vector<std::string>{"warmup", "no ddp", "1M/1G", "1M/2G"}));
  EXPECT_EQ(labels(plan_sweep(1, 1, true)), (std::vector<std::string>{"warmup", "no ddp", "1M/1G"}));
}

TEST(SweepTest, SingleRankWithoutDdp) {
  const std::vector<SweepRow> rows = plan_sweep(2, 2, false);
  EXPECT_FALSE(rows[2].ddp);  // 1M/1G trains as "no ddp" does
  EXPECT_TRUE(rows[3].ddp);
}

}  // namespace
}  // namespace ts::tasks::ddp_bench
