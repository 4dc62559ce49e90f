// The checkpoint layout of per-rank recipe state ("rank<r>/<name>") and the
// shape a resuming run must share: each rank gets its own part back, and a
// checkpoint of another number of ranks, or a malformed one, is an error
// that says so. (Gathering across 2 real ranks, and a bit-exact resume from
// it, are in //tests/tasks/lstm_lm:language_model_mpi_test.)
#include "tasks/common/rank_states.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

std::vector<std::string> names_of(const nn::NamedTensors& tensors) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : tensors) names.push_back(name);
  return names;
}

Tensor filled(double value, Dims shape = {2, 3}) { return full(shape, value); }

// What a run of `world` ranks writes: tensors "h" and "c" (and "ranking", a
// recipe name that starts like the prefix), rank r's filled with r.
nn::NamedTensors saved_by(int world) {
  nn::NamedTensors saved;
  for (const char* name : {"h", "c", "ranking"}) {
    for (int r = 0; r < world; ++r) saved.emplace_back(absl::StrCat("rank", r, "/", name), filled(r));
  }
  return saved;
}

TEST(RankStatesTest, OneProcessGathersItsOwnStateAsRankZero) {
  const nn::NamedTensors mine = {{"h", filled(1.5, {4})}, {"ranking", filled(2.5, {2, 2})}};
  const nn::NamedTensors gathered = value_or_die(gather_ranks_state(nullptr, mine));
  EXPECT_EQ(names_of(gathered), (std::vector<std::string>{"rank0/h", "rank0/ranking"}));
  const nn::NamedTensors back = value_or_die(ranks_part(gathered, 0, 1));
  ASSERT_EQ(names_of(back), (std::vector<std::string>{"h", "ranking"}));
  EXPECT_EQ(back[1].second.shape(), (Dims{2, 2}));
  EXPECT_EQ(to_vector<float>(back[1].second), std::vector<float>(4, 2.5f));
}

TEST(RankStatesTest, EachRankGetsItsOwnPart) {
  const nn::NamedTensors saved = saved_by(3);
  for (int rank = 0; rank < 3; ++rank) {
    const nn::NamedTensors mine = value_or_die(ranks_part(saved, rank, 3));
    ASSERT_EQ(names_of(mine), (std::vector<std::string>{"h", "c", "ranking"})) << "rank " << rank;
    for (const auto& [name, tensor] : mine) {
      EXPECT_EQ(to_vector<float>(tensor), std::vector<float>(6, static_cast<float>(rank))) << name;
    }
  }
}

TEST(RankStatesTest, AnotherNumberOfRanksIsRefused) {
  expect_error(ranks_part(saved_by(2), 0, 1).status(), absl::StatusCode::kFailedPrecondition,
               {"recipe state of 2 ranks (3 tensors each)", "this run has 1", "number of ranks that saved it"});
  expect_error(ranks_part(saved_by(2), 0, 4).status(), absl::StatusCode::kFailedPrecondition,
               {"2 ranks", "this run has 4"});
}

// Written before the per-rank layout: one rank's names, unprefixed ("ranking"
// among them is not a rank's part).
TEST(RankStatesTest, AnUnprefixedCheckpointResumesOnOneRankOnly) {
  const nn::NamedTensors old = {{"h", filled(1)}, {"ranking", filled(2)}};
  EXPECT_EQ(names_of(value_or_die(ranks_part(old, 0, 1))), (std::vector<std::string>{"h", "ranking"}));
  expect_error(ranks_part(old, 1, 2).status(), absl::StatusCode::kFailedPrecondition,
               {"recipe state of 1 ranks (2 tensors each)", "this run has 2"});
}

TEST(RankStatesTest, AMalformedLayoutIsDataLoss) {
  nn::NamedTensors mixed = saved_by(2);
  mixed.emplace_back("h", filled(0));
  expect_error(ranks_part(mixed, 0, 2).status(), absl::StatusCode::kDataLoss, {"mixes names with a rank<r>/ prefix"});

  nn::NamedTensors uneven = saved_by(2);
  uneven.pop_back();  // rank1/ranking
  expect_error(ranks_part(uneven, 0, 2).status(), absl::StatusCode::kDataLoss, {"2 ranks' parts of equal size"});

  const nn::NamedTensors gap = {{"rank0/h", filled(0)}, {"rank2/h", filled(2)}};
  expect_error(ranks_part(gap, 0, 2).status(), absl::StatusCode::kDataLoss, {"from rank0/ on"});
}

TEST(RankStatesTest, NoRecipeStateFitsAnyNumberOfRanks) {
  EXPECT_TRUE(value_or_die(ranks_part({}, 1, 4)).empty());
  EXPECT_TRUE(value_or_die(gather_ranks_state(nullptr, {})).empty());
}

TEST(RankStatesTest, AResumeNeedsTheShapeItWasWrittenWith) {
  RunShape saved;
  saved.set_world_size(2);
  saved.set_batch_size(64);
  saved.set_gradient_accumulation_steps(1);
  saved.set_seed(7);
  EXPECT_TRUE(check_resumable(saved, saved).ok());
  RunShape now = saved;
  now.set_world_size(4);
  expect_error(check_resumable(saved, now), absl::StatusCode::kFailedPrecondition,
               {"written with world size 2 and this run has 4"});
  now = saved;
  now.set_gradient_accumulation_steps(2);
  expect_error(check_resumable(saved, now), absl::StatusCode::kFailedPrecondition,
               {"gradient_accumulation_steps 1", "has 2"});
  now = saved;
  now.set_seed(8);
  expect_error(check_resumable(saved, now), absl::StatusCode::kFailedPrecondition, {"seed 7", "has 8"});
}

}  // namespace
}  // namespace ts::tasks
