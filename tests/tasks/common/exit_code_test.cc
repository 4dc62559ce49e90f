// run_to_exit_code: exit status 0 or 1, one "<name>: <message>" line for an
// error (a thrown ts::Error too), and none for an error every rank shares
// that rank 0 says (said_by_rank_0), so N ranks do not print it N times;
// MPI_Finalize only after an error every rank ends with.
#include "tasks/common/exit_code.h"

#include <cstdlib>
#include <functional>
#include <string>

#include "base/error.h"
#include "collectives/mpi/mpi_runtime.h"
#include "gtest/gtest.h"

namespace ts::tasks {
namespace {

// The exit code and what stderr got.
std::pair<int, std::string> run(const std::function<absl::Status()>& body) {
  ::testing::internal::CaptureStderr();
  const int code = run_to_exit_code("task", body);
  return {code, ::testing::internal::GetCapturedStderr()};
}

TEST(ExitCodeTest, ErrorsAreOneLineAndStatusOne) {
  EXPECT_EQ(run([] { return absl::OkStatus(); }), (std::pair<int, std::string>{0, ""}));
  EXPECT_EQ(run([] { return absl::InvalidArgumentError("epochs = -3"); }),
            (std::pair<int, std::string>{1, "task: epochs = -3\n"}));
  EXPECT_EQ(run([]() -> absl::Status { throw_error(absl::StatusCode::kInternal, "thrown"); }),
            (std::pair<int, std::string>{1, "task: thrown\n"}));
}

TEST(ExitCodeTest, AnErrorSaidByRank0IsPrintedThereOnly) {
  const absl::Status stopped = absl::CancelledError("stopped by signal 2");
  EXPECT_EQ(run([&] { return said_by_rank_0(/*leader=*/true, stopped); }),
            (std::pair<int, std::string>{1, "task: stopped by signal 2\n"}));
  EXPECT_EQ(run([&] { return said_by_rank_0(/*leader=*/false, stopped); }), (std::pair<int, std::string>{1, ""}));
  EXPECT_TRUE(said_by_rank_0(false, absl::OkStatus()).ok());
}

// An error every rank ends with lets MPI be finalized; one of this rank
// alone does not (exit_code_mpi_test runs it under mpirun). Each case in a
// process of its own, started afresh (the threadsafe style re-executes the
// binary), whose exit code says whether MPI was marked failed: the mark
// cannot be taken back, and the tests above leave it set.
int marked_failed_after(const std::function<absl::Status()>& body) {
  run_to_exit_code("task", body);
  return collectives::mpi::has_failed() ? 1 : 0;
}

TEST(ExitCodeTest, OnlyAnErrorOfThisRankAloneLeavesWithoutMpiFinalize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const absl::Status error = absl::DataLossError("rank 1's shard: corrupt JPEG");
  EXPECT_EXIT(std::exit(marked_failed_after([&] { return shared_by_all_ranks(error); })), ::testing::ExitedWithCode(0),
              "rank 1's shard");
  EXPECT_EXIT(std::exit(marked_failed_after([&] { return said_by_rank_0(/*leader=*/false, error); })),
              ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(std::exit(marked_failed_after([&] { return absl::OkStatus(); })), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(std::exit(marked_failed_after([&] { return error; })), ::testing::ExitedWithCode(1),
              "task: rank 1's shard: corrupt JPEG");
}

}  // namespace
}  // namespace ts::tasks
