// Rank discovery from fake environments: Open MPI's variables win over
// Slurm's, Slurm's over the plain RANK family unless torchrun set it; bad
// values are errors naming the variable.
#include "collectives/environment.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

EnvLookup fake(std::map<std::string, std::string> vars) {
  return [vars](absl::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Environment, NothingSetIsOneProcess) {
  ASSERT_OK_AND_ASSIGN(LaunchEnvironment env, discover_environment(fake({})));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kSingleProcess);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.master_port, 29500);
}

TEST(Environment, OpenMpiWinsOverSlurmAndPlain) {
  ASSERT_OK_AND_ASSIGN(LaunchEnvironment env, discover_environment(fake({{"OMPI_COMM_WORLD_RANK", "5"},
                                                                         {"OMPI_COMM_WORLD_SIZE", "8"},
                                                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                                                         {"SLURM_PROCID", "0"},
                                                                         {"SLURM_NTASKS", "2"},
                                                                         {"RANK", "3"},
                                                                         {"WORLD_SIZE", "4"},
                                                                         {"MASTER_ADDR", "node7"},
                                                                         {"MASTER_PORT", "1234"}})));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kOpenMpi);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 4);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 1234);
}

TEST(Environment, SlurmWithNodeListAndTasksPerNode) {
  ASSERT_OK_AND_ASSIGN(LaunchEnvironment env, discover_environment(fake({{"SLURM_PROCID", "5"},
                                                                         {"SLURM_NTASKS", "7"},
                                                                         {"SLURM_LOCALID", "0"},
                                                                         {"SLURM_NODEID", "2"},
                                                                         {"SLURM_TASKS_PER_NODE", "3(x2),1"},
                                                                         {"SLURM_JOB_NODELIST", "gpu[07-09],cpu1"},
                                                                         {"RANK", "0"},
                                                                         {"WORLD_SIZE", "1"}})));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kSlurm);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 7);
  EXPECT_EQ(env.local_size, 1);
  EXPECT_EQ(env.master_addr, "gpu07");
  EXPECT_EQ(*slurm_tasks_on_node("3(x2),1", 1), 3);
  EXPECT_EQ(*first_slurm_host("a1,b[1-2]"), "a1");
  EXPECT_FALSE(slurm_tasks_on_node("3(x2),1", 3).ok());
  EXPECT_FALSE(first_slurm_host("node[01-").ok());
}

TEST(Environment, PlainVariables) {
  ASSERT_OK_AND_ASSIGN(LaunchEnvironment env, discover_environment(fake({{"RANK", "2"},
                                                                         {"WORLD_SIZE", "4"},
                                                                         {"LOCAL_RANK", "0"},
                                                                         {"LOCAL_WORLD_SIZE", "2"},
                                                                         {"MASTER_ADDR", "10.0.0.1"},
                                                                         {"MASTER_PORT", "29400"}})));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kPlain);
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_EQ(env.local_size, 2);
  EXPECT_EQ(env.master_addr, "10.0.0.1");
  // LOCAL_RANK defaults to RANK, the local size to the world size.
  ASSERT_OK_AND_ASSIGN(env, discover_environment(fake({{"RANK", "1"}, {"WORLD_SIZE", "2"}})));
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 2);
}

// `srun --ntasks-per-node=1 torchrun --nproc_per_node=8`: every worker
// inherits the srun task's SLURM_PROCID, and torchrun's own variables are
// the worker's place.
TEST(Environment, TorchrunUnderSrunWinsOverSlurm) {
  const std::map<std::string, std::string> vars = {
      {"SLURM_PROCID", "1"},        {"SLURM_NTASKS", "2"},        {"SLURM_LOCALID", "0"},
      {"SLURM_NODELIST", "n[1-2]"}, {"TORCHELASTIC_RUN_ID", "7"}, {"RANK", "13"},
      {"WORLD_SIZE", "16"},         {"LOCAL_RANK", "5"},          {"LOCAL_WORLD_SIZE", "8"}};
  ASSERT_OK_AND_ASSIGN(LaunchEnvironment env, discover_environment(fake(vars)));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kPlain);
  EXPECT_EQ(env.rank, 13);
  EXPECT_EQ(env.world_size, 16);
  EXPECT_EQ(env.local_rank, 5);
  EXPECT_EQ(env.local_size, 8);
  // Without torchrun's mark, a stray RANK does not override srun's place.
  std::map<std::string, std::string> srun = vars;
  srun.erase("TORCHELASTIC_RUN_ID");
  ASSERT_OK_AND_ASSIGN(env, discover_environment(fake(srun)));
  EXPECT_EQ(env.source, LaunchEnvironment::Source::kSlurm);
  EXPECT_EQ(env.rank, 1);
}

TEST(Environment, BadValuesNameTheVariable) {
  expect_error(discover_environment(fake({{"RANK", "two"}, {"WORLD_SIZE", "4"}})).status(),
               absl::StatusCode::kInvalidArgument, {"RANK/WORLD_SIZE", "RANK='two' is not an integer"});
  expect_error(discover_environment(fake({{"RANK", "4"}, {"WORLD_SIZE", "4"}})).status(),
               absl::StatusCode::kInvalidArgument, {"rank=4", "world size=4"});
  expect_error(discover_environment(fake({{"OMPI_COMM_WORLD_RANK", "0"}})).status(), absl::StatusCode::kNotFound,
               {"open mpi", "OMPI_COMM_WORLD_SIZE is not set"});
  expect_error(discover_environment(fake({{"MASTER_PORT", "99999"}})).status(), absl::StatusCode::kInvalidArgument,
               {"MASTER_PORT=99999"});
  expect_error(discover_environment(fake({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_TASKS_PER_NODE", "x"}}))
                   .status(),
               absl::StatusCode::kInvalidArgument, {"slurm", "SLURM_TASKS_PER_NODE='x'"});
}

}  // namespace
}  // namespace ts::collectives
