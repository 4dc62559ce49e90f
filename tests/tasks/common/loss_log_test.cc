// The loss log: device losses read back together, in step order, once.
#include "tasks/common/loss_log.h"

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

Tensor scalar_on(double value, Device device) { return full({}, value, {DType::kF32, device}); }

void check_reads_in_order(Device device) {
  LossLog log;
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(log.read().empty());
  log.add(1, 8, 0.5, scalar_on(2.5, device));
  log.add(2, 8, 1.0, scalar_on(0.125, device));
  log.add(3, 4, 1.25, scalar_on(-1.0, device));
  EXPECT_EQ(log.size(), 3u);
  const std::vector<StepLoss> read = log.read();
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].global_step, 1);
  EXPECT_EQ(read[0].samples, 8);
  EXPECT_EQ(read[0].run_seconds, 0.5);
  EXPECT_DOUBLE_EQ(read[0].value, 2.5);
  EXPECT_DOUBLE_EQ(read[1].value, 0.125);
  EXPECT_EQ(read[2].global_step, 3);
  EXPECT_EQ(read[2].samples, 4);
  EXPECT_EQ(read[2].run_seconds, 1.25);
  EXPECT_DOUBLE_EQ(read[2].value, -1.0);
  EXPECT_TRUE(log.empty()) << "read() empties the log";
  EXPECT_TRUE(log.read().empty());
}

TEST(LossLogTest, ReadsEveryPendingLossInStepOrder) { check_reads_in_order(Device::cpu()); }

TEST(LossLogTest, ReadsCudaLosses) {
  TS_SKIP_WITHOUT_CUDA();
  check_reads_in_order(Device::cuda(0));
}

}  // namespace
}  // namespace ts::tasks
