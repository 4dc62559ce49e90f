// StopSignals: a signal asks to stop (the process goes on to checkpoint);
// the first one received is kept; handlers come and go with the object.
#include "tasks/common/stop_signals.h"

#include <csignal>

#include "gtest/gtest.h"

namespace ts::tasks {
namespace {

TEST(StopSignalsTest, TheFirstSignalIsKeptAndTheProcessGoesOn) {
  {
    StopSignals signals;
    EXPECT_EQ(StopSignals::received(), 0);
    ASSERT_EQ(std::raise(SIGTERM), 0);  // the default action would end the test
    EXPECT_EQ(StopSignals::received(), SIGTERM);
    ASSERT_EQ(std::raise(SIGUSR1), 0);
    EXPECT_EQ(StopSignals::received(), SIGTERM);
  }
  // A new one starts afresh.
  StopSignals again;
  EXPECT_EQ(StopSignals::received(), 0);
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_EQ(StopSignals::received(), SIGINT);
}

// The handler resets itself: a second SIGTERM takes the default action.
TEST(StopSignalsTest, ASecondSignalOfTheKindEndsTheProcess) {
  EXPECT_EXIT(
      {
        StopSignals signals;
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
}  // namespace ts::tasks
