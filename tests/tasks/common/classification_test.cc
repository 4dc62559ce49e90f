// train_classifier with force_ddp: a single process trains through
// DistributedDataParallel over a communicator of one rank (MPI on the CPU,
// started as a singleton; NCCL on a GPU) and ends with exactly the parameters of the plain
// run, so the DDP overhead a report measures is DDP's alone. The report names
// the backend that carried the gradients.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/mpi/mpi_runtime.h"
#include "gtest/gtest.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "tasks/common/classification.h"
#include "tasks/common/files.h"
#include "tasks/common/image_data.h"
#include "tensor/status_macros.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

struct TrainedRun {
  std::vector<Tensor> parameters;
  std::string report;
};

absl::StatusOr<TrainedRun> train(const std::string& device, bool force_ddp) {
  TaskConfig config;
  config.set_synthetic(true);
  config.set_epochs(1);
  config.set_max_steps(4);
  config.set_batch_size(16);
  config.set_lr(0.05);
  config.set_momentum(0.9);
  config.set_device(device);
  config.set_force_ddp(force_ddp);
  config.set_output_dir(join_path(::testing::TempDir(), absl::StrCat(device, force_ddp ? "_ddp" : "_plain")));
  RunnerOptions options;
  options.progress_out = nullptr;
  ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, Runner::create(config, options));
  ASSIGN_OR_RETURN(Distributed dist, init_distributed(collectives::LaunchEnvironment{}, runner->device(),
                                                      runner->config().force_ddp()));
  ASSIGN_OR_RETURN(ClassificationData data, open_image_data(runner->config()));
  ASSIGN_OR_RETURN(std::shared_ptr<nn::Linear> linear,
                   nn::Linear::create(data.channels * 32 * 32, data.num_classes));
  auto model = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Flatten>(), linear});
  RETURN_IF_ERROR(train_classifier(*runner, dist, model, data, cross_entropy_recipe()));
  TrainedRun run;
  for (const autograd::Variable& p : model->parameters()) {
    ASSIGN_OR_RETURN(Tensor on_host, to(p.data(), Device::cpu()));
    run.parameters.push_back(on_host);
  }
  std::ifstream file(runner->report_path());
  std::stringstream text;
  text << file.rdbuf();
  run.report = text.str();
  return run;
}

struct DeviceAndBackend {
  std::string device;
  std::string backend;
};

class ForceDdp : public ::testing::TestWithParam<DeviceAndBackend> {};

TEST_P(ForceDdp, OneRankTrainsExactlyAsThePlainModel) {
  const auto& [device, backend] = GetParam();
  if (device == "cuda") TS_SKIP_WITHOUT_CUDA();
  ASSERT_OK_AND_ASSIGN(TrainedRun plain, train(device, false));
  ASSERT_OK_AND_ASSIGN(TrainedRun ddp, train(device, true));
  ASSERT_EQ(plain.parameters.size(), ddp.parameters.size());
  for (size_t i = 0; i < plain.parameters.size(); ++i) {
    ::ts::testing::expect_equal(ddp.parameters[i], ::ts::testing::ref_of(plain.parameters[i]),
                                "parameter " + std::to_string(i));
  }
  EXPECT_NE(ddp.report.find(absl::StrCat("\"backend\": \"", backend, "\"")), std::string::npos) << ddp.report;
  EXPECT_EQ(plain.report.find("\"backend\""), std::string::npos) << plain.report;
}

// MPI on the CPU; NCCL on a GPU, the path multi-GPU training takes.
INSTANTIATE_TEST_SUITE_P(CpuAndCuda, ForceDdp,
                         ::testing::Values(DeviceAndBackend{"cpu", "mpi"}, DeviceAndBackend{"cuda", "nccl"}),
                         [](const auto& info) { return info.param.device; });

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Open MPI names its session directory (PMIx's sockets and shared memory)
  // by pid under TMPDIR. Bazel's sandbox gives every test pid 12 and
  // TMPDIR=/tmp, so concurrent runs of this test collided there and failed
  // in MPI_Init. A short directory of its own (socket paths must stay under
  // 108 bytes, which rules out TEST_TMPDIR).
  char session_dir[] = "/tmp/ts_mpi_XXXXXX";
  if (mkdtemp(session_dir) != nullptr) setenv("TMPDIR", session_dir, 1);
  const int result = RUN_ALL_TESTS();
  ts::collectives::mpi::finalize();  // the singleton MPI of the DDP run
  std::error_code ignored;
  std::filesystem::remove_all(session_dir, ignored);
  return result;
}
