// Device selection (auto, explicit, unusable), seeding, and the environment
// description's fields.
#include "tasks/common/environment.h"

#include <regex>

#include "gtest/gtest.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

TEST(EnvironmentTest, SelectsDevices) {
  ASSERT_OK_AND_ASSIGN(Device automatic, select_device("auto"));
  EXPECT_EQ(automatic, cuda::is_available() ? Device::cuda(0) : Device::cpu());
  ASSERT_OK_AND_ASSIGN(Device cpu, select_device("cpu"));
  EXPECT_EQ(cpu, Device::cpu());
  expect_error(select_device("cuda:64").status(), absl::StatusCode::kFailedPrecondition, {"--device=cuda:64"});
  // "cuda" is the local rank's GPU (there is no 65th, unless the process
  // sees one GPU, its own), an explicit index stays as given.
  if (cuda::device_count() != 1) {
    expect_error(select_device("cuda", 64).status(), absl::StatusCode::kFailedPrecondition,
                 {"--device=cuda (cuda:64)"});
  }
  expect_error(select_device("cuda:64", 3).status(), absl::StatusCode::kFailedPrecondition, {"=cuda:64 (cuda:64)"});
  expect_error(select_device("tpu").status(), absl::StatusCode::kInvalidArgument, {"--device", "tpu"});
}

TEST(EnvironmentTest, EachLocalRankTakesItsGpuOrTheOneItSees) {
  EXPECT_EQ(gpu_for_local_rank(3, 8), 3);  // mpirun: every rank sees the machine's GPUs
  EXPECT_EQ(gpu_for_local_rank(3, 1), 0);  // srun --gpus-per-task=1: each rank sees its own
  EXPECT_EQ(gpu_for_local_rank(0, 1), 0);
  EXPECT_EQ(gpu_for_local_rank(9, 8), 9);  // more ranks than GPUs: select_device names cuda:9
}

TEST(EnvironmentTest, DescribesTheMachine) {
  const Environment e = describe_environment(Device::cpu());
  EXPECT_FALSE(e.hostname.empty());
  EXPECT_FALSE(e.cpu_model.empty());
#if defined(__x86_64__)
  EXPECT_TRUE(std::regex_match(e.cpu_family_model, std::regex(R"(\d+/\d+/\d+)"))) << e.cpu_family_model;
  EXPECT_TRUE(std::regex_match(e.cpu_vector_isa, std::regex("avx512f|avx2|avx|sse2"))) << e.cpu_vector_isa;
#endif
  EXPECT_GE(e.cpu_logical_cores, 1);
  EXPECT_GE(e.cpu_usable_cores, 1);
  EXPECT_EQ(e.device, "cpu");
  EXPECT_EQ(e.gpu_name, "none");
  const std::regex version(R"(\d+\.\d+\.\d+)");
  EXPECT_TRUE(std::regex_match(e.cudnn, version)) << e.cudnn;
  EXPECT_TRUE(std::regex_match(e.nccl, version)) << e.nccl;
  EXPECT_TRUE(std::regex_match(e.date, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << e.date;
  EXPECT_EQ(e.commit, "unstamped");  // tests are not stamped
  const Json j = e.to_json();
  for (const char* key : {"hostname", "cpu_model", "cpu_family_model", "cpu_vector_isa", "cpu_l2", "gpu_name",
                          "cuda_runtime", "cuda_driver", "cudnn", "nccl", "commit", "date"}) {
    ASSERT_NE(j.find(key), nullptr) << key;
    EXPECT_TRUE(j.find(key)->is_string()) << key;
  }
}

TEST(EnvironmentTest, NamesTheGpu) {
  TS_SKIP_WITHOUT_CUDA();
  const Environment e = describe_environment(Device::cuda(0));
  EXPECT_EQ(e.device, "cuda:0");
  EXPECT_NE(e.gpu_name.find("sm_"), std::string::npos) << e.gpu_name;
  EXPECT_NE(e.cuda_driver, "none");
}

}  // namespace
}  // namespace ts::tasks
