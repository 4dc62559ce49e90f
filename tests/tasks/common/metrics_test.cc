// Step-time percentiles against hand-computed values (NumPy's linear
// method), warm-up exclusion, throughput, the per-step split into compute and
// communication, time to target, the thinning of long curves; all record into
// the run state's messages, so a resumed run continues them.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tasks/common/curve.h"
#include "tasks/common/step_times.h"
#include "tasks/common/time_to_target.h"

namespace ts::tasks {
namespace {

TEST(StepTimesTest, ExactPercentilesAfterWarmup) {
  StepStats stats;
  StepTimes t(&stats, 2);
  EXPECT_FALSE(t.record(100, 1));  // warm-up, left out
  EXPECT_FALSE(t.record(100, 1));
  // 10 steps, recorded out of order: 1..10 seconds, 8 samples each.
  for (const double s : {7, 3, 10, 1, 5, 2, 9, 4, 8, 6}) EXPECT_TRUE(t.record(s, 8));
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
  EXPECT_DOUBLE_EQ(t.to_json(4).find("global_samples_per_s")->as_double(), 4 * 80.0 / 55.0);
  const Json j = t.to_json();
  EXPECT_DOUBLE_EQ(j.find("p90_s")->as_double(), 9.1);
  EXPECT_DOUBLE_EQ(j.find("mean_s")->as_double(), 5.5);
  EXPECT_EQ(j.find("warmup_steps")->as_int(), 2);
  ASSERT_EQ(j.find("step_seconds")->as_array().size(), 10u);
  EXPECT_EQ(j.find("step_seconds")->as_array()[0].as_double(), 7);
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
  EXPECT_TRUE(t.to_json(2).find("global_samples_per_s")->is_null());
  EXPECT_EQ(t.to_json().dump(-1).find("nan"), std::string::npos);
  t.record_communication(0.5);
  const Json per_step = t.per_step_json();
  for (const char* key : {"step_s", "communication_s", "compute_s"}) EXPECT_TRUE(per_step.find(key)->is_null()) << key;
}

TEST(StepTimesTest, PerStepSplitCountsOnlyTheCountedStepsCommunication) {
  StepStats stats;
  StepTimes t(&stats, 2);
  t.record(9, 8);  // warm-up
  t.record(9, 8);
  t.record_communication(5);  // the warm-up's: left out
  for (const double s : {1.0, 2.0}) t.record(s, 8);
  t.record_communication(0.5);
  t.record(3, 8);
  t.record_communication(0.25);
  const Json j = t.per_step_json();
  EXPECT_DOUBLE_EQ(j.find("step_s")->as_double(), 2);
  EXPECT_DOUBLE_EQ(j.find("communication_s")->as_double(), 0.25);
  EXPECT_DOUBLE_EQ(j.find("compute_s")->as_double(), 1.75);
  EXPECT_DOUBLE_EQ(stats.counted_communication_seconds(), 0.75);  // what a checkpoint keeps
}

TEST(StepTimesTest, RestoredRunWarmsUpAgain) {
  // As a checkpoint restores it: two counted steps of 8 samples.
  StepStats stats;
  stats.add_counted_seconds(2);
  stats.add_counted_seconds(4);
  stats.set_counted_samples(16);
  stats.set_total_seconds(10);
  stats.set_warmup_steps(1);
  StepTimes t(&stats, 1);
  t.record(50, 8);  // the resumed session's first step
  t.record(6, 8);
  EXPECT_EQ(t.steps(), 3);
  EXPECT_EQ(t.samples(), 24);
  EXPECT_DOUBLE_EQ(t.percentile(50), 4);
  EXPECT_DOUBLE_EQ(stats.total_seconds(), 66);
  // The report states the steps left out in both sessions.
  EXPECT_EQ(t.to_json().find("warmup_steps")->as_int(), 2);
}

// An evaluation at `wall_seconds` of run time, three quarters of it training.
RunTime at(double wall_seconds, int epoch) { return {wall_seconds, 0.75 * wall_seconds, epoch}; }

TEST(TimeToTargetTest, FirstCrossingWins) {
  TargetState state;
  TimeToTarget t("accuracy", 0.9, /*minimize=*/false, &state);
  EXPECT_TRUE(t.to_json().find("best")->is_null());
  EXPECT_FALSE(t.observe(0.5, at(10, 1)));
  EXPECT_FALSE(t.observe(std::nan(""), at(15, 2)));
  EXPECT_EQ(t.to_json().find("seconds")->as_string(), "not reached");
  EXPECT_TRUE(t.to_json().find("epoch")->is_null());
  EXPECT_TRUE(t.observe(0.9, at(20, 3)));
  EXPECT_FALSE(t.observe(0.95, at(30, 4)));
  EXPECT_TRUE(t.reached());
  EXPECT_EQ(t.metric(), "accuracy");
  EXPECT_EQ(state.seconds(), 20);
  EXPECT_EQ(state.train_seconds(), 15);
  EXPECT_EQ(state.epoch(), 3);
  EXPECT_EQ(state.best(), 0.95);
  EXPECT_EQ(t.to_json().find("seconds")->as_double(), 20);
  EXPECT_EQ(t.to_json().find("train_seconds")->as_double(), 15);
  EXPECT_EQ(t.to_json().find("epoch")->as_int(), 3);
}

TEST(TimeToTargetTest, RestoredStateKeepsTheFirstCrossing) {
  TargetState state;
  state.set_reached(true);
  state.set_seconds(20);
  state.set_epoch(3);
  state.set_has_best(true);
  state.set_best(0.91);
  TimeToTarget t("accuracy", 0.9, /*minimize=*/false, &state);
  EXPECT_TRUE(t.reached());
  EXPECT_FALSE(t.observe(0.93, at(40, 5)));
  EXPECT_EQ(state.seconds(), 20);
  EXPECT_EQ(state.best(), 0.93);
  EXPECT_FALSE(t.observe(0.5, at(50, 6)));
  EXPECT_EQ(state.best(), 0.93);
}

TEST(TimeToTargetTest, AMinimizedMetricReachesAtOrBelowItsTarget) {
  TargetState state;
  TimeToTarget t("perplexity", 150, /*minimize=*/true, &state);
  EXPECT_FALSE(t.observe(std::nan(""), at(5, 1)));  // a diverged first evaluation
  EXPECT_TRUE(t.to_json().find("best")->is_null());
  EXPECT_FALSE(t.observe(400, at(10, 1)));
  EXPECT_EQ(state.best(), 400);
  EXPECT_FALSE(t.observe(std::nan(""), at(15, 2)));
  EXPECT_FALSE(t.observe(151, at(18, 3)));
  EXPECT_EQ(state.best(), 151);
  EXPECT_TRUE(t.observe(150, at(20, 4)));
  EXPECT_FALSE(t.observe(170, at(30, 5)));
  EXPECT_EQ(state.seconds(), 20);
  EXPECT_EQ(state.epoch(), 4);
  EXPECT_EQ(state.best(), 150);
  EXPECT_TRUE(t.to_json().find("minimize")->as_bool());
}

std::vector<int64_t> steps_of(const CurvePoints& points) { return {points.steps().begin(), points.steps().end()}; }

TEST(CurveTest, KeepsEveryStepUpToItsBound) {
  CurvePoints points;
  Curve curve(&points, 4);
  for (int step = 1; step <= 4; ++step) curve.add(step, 0.5 * step, 10.0 / step);
  const Json j = curve.to_json();
  EXPECT_EQ(j.find("step")->dump(-1), "[1,2,3,4]");
  EXPECT_EQ(j.find("seconds")->dump(-1), "[0.5,1.0,1.5,2.0]");
  EXPECT_EQ(j.find("value")->dump(-1), "[10.0,5.0,3.3333333333333335,2.5]");
}

TEST(CurveTest, ThinsByDoublingTheStrideAndKeepsTheFirstStep) {
  CurvePoints points;
  Curve curve(&points, 4);
  for (int step = 1; step <= 5; ++step) curve.add(step, step, step);
  EXPECT_EQ(steps_of(points), (std::vector<int64_t>{1, 3, 5}));  // 5 > 4 points: every 2nd step
  for (int step = 6; step <= 10; ++step) curve.add(step, step, step);
  EXPECT_EQ(steps_of(points), (std::vector<int64_t>{1, 5, 9}));  // every 4th
  EXPECT_EQ(points.stride(), 4);
  EXPECT_EQ(std::vector<double>(points.values().begin(), points.values().end()), (std::vector<double>{1, 5, 9}));
}

TEST(CurveTest, ARestoredCurveGoesOnAsTheUninterruptedOne) {
  CurvePoints whole, first_half;
  Curve uninterrupted(&whole, 4);
  Curve before(&first_half, 4);
  for (int step = 1; step <= 6; ++step) {
    uninterrupted.add(step, step, step);
    before.add(step, step, step);
  }
  CurvePoints restored = first_half;  // as a checkpoint carries it
  Curve after(&restored, 4);
  for (int step = 7; step <= 20; ++step) {
    uninterrupted.add(step, step, step);
    after.add(step, step, step);
  }
  EXPECT_EQ(steps_of(restored), steps_of(whole));
  EXPECT_EQ(restored.stride(), whole.stride());
}

}  // namespace
}  // namespace ts::tasks
