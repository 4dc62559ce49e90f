// The language-model task on 2 ranks (under mpirun): a run stopped mid-epoch
// resumes to the parameters of an uninterrupted one, bit for bit. Each rank
// reads its own rows of the stream and carries its own LSTM states, so each
// needs its own states back from the checkpoint, which rank 0 writes; one
// rank alone cannot resume it.
#include <vector>

#include "gtest/gtest.h"
#include "tasks/lstm_lm/lm_data.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tasks/lstm_lm/lm_testing.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using lm_testing::config;
using lm_testing::parameters;
using lm_testing::recipe;
using lm_testing::run;

TEST(LanguageModelAcrossRanks, StoppedMidEpochResumesBitIdentically) {
  collectives::Communicator& world = collectives::mpitest::world();
  const int rank = world.rank(), ranks = world.world_size();
  TaskConfig whole = config("whole");
  whole.MutableExtension(lstm_lm)->set_random_bptt(true);
  whole.clear_checkpoint_dir();
  auto reference = recipe(whole, rank, ranks);
  ASSERT_OK_AND_ASSIGN(const RunSummary done, run(whole, *reference, Device::cpu(), &world));
  ASSERT_EQ(done.epochs_completed, 2);

  TaskConfig part = config("part");
  part.MutableExtension(lstm_lm)->set_random_bptt(true);
  ASSERT_OK_AND_ASSIGN(const LmData data, open_lm_data(part, rank, ranks));
  ASSERT_OK(data.data.train_batches->start_epoch(0));
  part.set_max_steps(data.data.train_batches->num_batches() + 3);  // inside epoch 2
  auto first = recipe(part, rank, ranks);
  ASSERT_OK_AND_ASSIGN(const RunSummary stopped, run(part, *first, Device::cpu(), &world));
  ASSERT_EQ(stopped.epochs_completed, 1);
  part.set_max_steps(0);
  part.set_resume(true);
  auto second = recipe(part, rank, ranks);
  ASSERT_OK_AND_ASSIGN(const RunSummary resumed, run(part, *second, Device::cpu(), &world));
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.global_step, done.global_step);
  EXPECT_EQ(parameters(*second->model()), parameters(*reference->model()));
  EXPECT_EQ(resumed.last_metrics, done.last_metrics);
  // Another number of ranks cannot take the run (and its ranks' states) over.
  if (rank == 0) {
    auto alone = recipe(part);
    ::ts::testing::expect_error(run(part, *alone).status(), absl::StatusCode::kFailedPrecondition,
                                {"run_state.ckpt", "written with world size 2 and this run has 1"});
  }
}

}  // namespace
}  // namespace ts::tasks
