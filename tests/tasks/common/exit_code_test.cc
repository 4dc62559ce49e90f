// run_to_exit_code: exit status 0 or 1, one "<name>: <message>" line for an
// error (a thrown ts::Error too), and none for an error every rank shares
// that rank 0 says (said_by_rank_0), so N ranks do not print it N times.
#include "tasks/common/exit_code.h"

#include <string>

#include "base/error.h"
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

}  // namespace
}  // namespace ts::tasks
