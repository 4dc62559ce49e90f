// Step-time percentiles against hand-computed values (NumPy's linear
// method), warm-up exclusion, throughput, time to target; both record into
// the run state's messages, so a resumed run continues them.
#include <cmath>

#include "gtest/gtest.h"
#include "tasks/common/step_times.h"
#include "tasks/common/time_to_target.h"

namespace ts::tasks {
namespace {

TEST(StepTimesTest, ExactPercentilesAfterWarmup) {
  StepStats stats;
  StepTimes t(&stats, 2);
  t.record(100, 1);  // warm-up, left out
  t.record(100, 1);
  // 10 steps, recorded out of order: 1..10 seconds, 8 samples each.
  for (const double s : {7, 3, 10, 1, 5, 2, 9, 4, 8, 6}) t.record(s, 8);
  EXPECT_EQ(t.steps(), 10);
  EXPECT_EQ(t.samples(), 80);
  EXPECT_DOUBLE_EQ(t.counted_seconds(), 55);
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
  // The message holds what a checkpoint keeps: every step in the total,
  // the counted ones in recording order.
  EXPECT_DOUBLE_EQ(stats.total_seconds(), 255);
  ASSERT_EQ(stats.counted_seconds_size(), 10);
  EXPECT_EQ(stats.counted_seconds(0), 7);
  EXPECT_EQ(stats.counted_samples(), 80);
}

TEST(StepTimesTest, NoCountedStepsGiveNullNotZero) {
  StepStats stats;
  StepTimes t(&stats, 5);
  t.record(1, 1);
  EXPECT_TRUE(std::isnan(t.percentile(50)));
  EXPECT_TRUE(std::isnan(t.samples_per_second()));
  EXPECT_TRUE(t.to_json().find("p50_s")->is_null());
  EXPECT_TRUE(t.to_json().find("mean_s")->is_null());
  EXPECT_EQ(t.to_json().dump(-1).find("nan"), std::string::npos);
}

TEST(StepTimesTest, RestoredRunWarmsUpAgain) {
  // As a checkpoint restores it: two counted steps of 8 samples.
  StepStats stats;
  stats.add_counted_seconds(2);
  stats.add_counted_seconds(4);
  stats.set_counted_samples(16);
  stats.set_total_seconds(10);
  StepTimes t(&stats, 1);
  t.record(50, 8);  // the resumed session's first step
  t.record(6, 8);
  EXPECT_EQ(t.steps(), 3);
  EXPECT_EQ(t.samples(), 24);
  EXPECT_DOUBLE_EQ(t.percentile(50), 4);
  EXPECT_DOUBLE_EQ(stats.total_seconds(), 66);
}

TEST(TimeToTargetTest, FirstCrossingWins) {
  TargetState state;
  TimeToTarget t("accuracy", 0.9, &state);
  EXPECT_TRUE(t.to_json().find("best")->is_null());
  EXPECT_FALSE(t.observe(0.5, 10, 1));
  EXPECT_FALSE(t.observe(std::nan(""), 15, 2));
  EXPECT_EQ(t.to_json().find("seconds")->as_string(), "not reached");
  EXPECT_TRUE(t.to_json().find("epoch")->is_null());
  EXPECT_TRUE(t.observe(0.9, 20, 3));
  EXPECT_FALSE(t.observe(0.95, 30, 4));
  EXPECT_TRUE(t.reached());
  EXPECT_EQ(t.metric(), "accuracy");
  EXPECT_EQ(state.seconds(), 20);
  EXPECT_EQ(state.epoch(), 3);
  EXPECT_EQ(state.best(), 0.95);
  EXPECT_EQ(t.to_json().find("seconds")->as_double(), 20);
  EXPECT_EQ(t.to_json().find("epoch")->as_int(), 3);
}

TEST(TimeToTargetTest, RestoredStateKeepsTheFirstCrossing) {
  TargetState state;
  state.set_reached(true);
  state.set_seconds(20);
  state.set_epoch(3);
  state.set_has_best(true);
  state.set_best(0.91);
  TimeToTarget t("accuracy", 0.9, &state);
  EXPECT_TRUE(t.reached());
  EXPECT_FALSE(t.observe(0.93, 40, 5));
  EXPECT_EQ(state.seconds(), 20);
  EXPECT_EQ(state.best(), 0.93);
  EXPECT_FALSE(t.observe(0.5, 50, 6));
  EXPECT_EQ(state.best(), 0.93);
}

}  // namespace
}  // namespace ts::tasks
