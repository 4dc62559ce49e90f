// connect_world outside mpirun: MPI starts the process as a world of its own,
// which must match what the launcher said, or every rank would train alone.
#include "collectives/world.h"

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

TEST(ConnectWorld, MpiSingletonMatchesAOneRankLaunch) {
  const absl::StatusOr<std::unique_ptr<Communicator>> world =
      connect_world(LaunchEnvironment{}, Device::cpu(), CommunicatorOptions{});
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_EQ((*world)->world_size(), 1);
}

// torchrun-style variables for rank 1 of 2, no mpirun: MPI sees rank 0 of 1.
TEST(ConnectWorld, ALaunchMpiDidNotJoinIsAnError) {
  LaunchEnvironment env;
  env.source = LaunchEnvironment::Source::kPlain;
  env.rank = 1;
  env.world_size = 2;
  expect_error(connect_world(env, Device::cpu(), CommunicatorOptions{}).status(), absl::StatusCode::kFailedPrecondition,
               {"MPI sees rank 0 of 1", "says rank 1 of 2", "mpirun"});
}

}  // namespace
}  // namespace ts::collectives
