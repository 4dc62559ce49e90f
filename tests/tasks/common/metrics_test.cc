// Step-time percentiles against hand-computed values (NumPy's linear
// method), warm-up exclusion, throughput, time buckets, time to target.
#include <cmath>
#include <thread>

#include "gtest/gtest.h"
#include "tasks/common/step_times.h"
#include "tasks/common/time_buckets.h"
#include "tasks/common/time_to_target.h"

namespace ts::tasks {
namespace {

TEST(StepTimesTest, ExactPercentilesAfterWarmup) {
  StepTimes t(2);
  t.record(100, 1);  // warm-up, left out
  t.record(100, 1);
  // 10 steps, recorded out of order: 1..10 seconds, 8 samples each.
  for (const double s : {7, 3, 10, 1, 5, 2, 9, 4, 8, 6}) t.record(s, 8);
  EXPECT_EQ(t.steps(), 10);
  EXPECT_EQ(t.samples(), 80);
  // np.percentile([1..10], [50, 75, 90, 95]) = 5.5, 7.75, 9.1, 9.55
  EXPECT_DOUBLE_EQ(t.percentile(50), 5.5);
  EXPECT_DOUBLE_EQ(t.percentile(75), 7.75);
  EXPECT_DOUBLE_EQ(t.percentile(90), 9.1);
  EXPECT_DOUBLE_EQ(t.percentile(95), 9.55);
  EXPECT_DOUBLE_EQ(t.percentile(0), 1);
  EXPECT_DOUBLE_EQ(t.percentile(100), 10);
  EXPECT_DOUBLE_EQ(t.samples_per_second(), 80.0 / 55.0);
  const Json j = t.to_json();
  EXPECT_DOUBLE_EQ(j.find("p90_s")->as_double(), 9.1);
  EXPECT_DOUBLE_EQ(j.find("mean_s")->as_double(), 5.5);
  EXPECT_EQ(j.find("warmup_steps")->as_int(), 2);
}

TEST(StepTimesTest, NoCountedStepsGiveNullNotZero) {
  StepTimes t(5);
  t.record(1, 1);
  EXPECT_TRUE(std::isnan(t.percentile(50)));
  EXPECT_TRUE(std::isnan(t.samples_per_second()));
  EXPECT_TRUE(t.to_json().find("p50_s")->is_null());
  EXPECT_EQ(t.to_json().dump(-1).find("nan"), std::string::npos);
}

TEST(StepTimesTest, RestoredRunWarmsUpAgain) {
  StepTimes t(1);
  t.restore({2, 4}, 16);
  t.record(50, 8);  // the resumed session's first step
  t.record(6, 8);
  EXPECT_EQ(t.steps(), 3);
  EXPECT_EQ(t.samples(), 24);
  EXPECT_DOUBLE_EQ(t.percentile(50), 4);
}

TEST(TimeBucketsTest, AccumulatesFromThreads) {
  TimeBuckets b;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 1000; ++k) b.add("communication", 0.001);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_NEAR(b.seconds("communication"), 4.0, 1e-9);
  EXPECT_EQ(b.seconds("data"), 0);
  { TimeBuckets::Scope scope(b, "data"); }
  EXPECT_EQ(b.totals().size(), 2u);
  EXPECT_GE(b.seconds("data"), 0);
}

TEST(TimeToTargetTest, FirstCrossingWins) {
  TimeToTarget t("accuracy", 0.9);
  EXPECT_FALSE(t.observe(0.5, 10, 1));
  EXPECT_FALSE(t.observe(std::nan(""), 15, 2));
  EXPECT_EQ(t.to_json().find("seconds")->as_string(), "not reached");
  EXPECT_TRUE(t.observe(0.9, 20, 3));
  EXPECT_FALSE(t.observe(0.95, 30, 4));
  EXPECT_TRUE(t.reached());
  EXPECT_EQ(t.seconds(), 20);
  EXPECT_EQ(t.epoch(), 3);
  EXPECT_EQ(t.best(), 0.95);
  EXPECT_EQ(t.to_json().find("seconds")->as_double(), 20);
}

}  // namespace
}  // namespace ts::tasks
