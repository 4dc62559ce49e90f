// The classification recipe on the trainer with force_ddp: a single process
// trains through DistributedDataParallel over a communicator of one rank (MPI
// on the CPU, started as a singleton; NCCL on a GPU) and ends with exactly
// the parameters of the plain run, so the DDP overhead a report measures is
// DDP's alone. The report names the backend that carried the gradients,
// splits the mean step into communication and compute, and counts the one
// node the communicator spans.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/json.h"
#include "base/status_macros.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/world.h"
#include "data/sets/image_classification.h"
#include "gtest/gtest.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "tasks/common/classification.h"
#include "tasks/common/trainer.h"
#include "tensor/random.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

struct TrainedRun {
  std::vector<Tensor> parameters;
  std::string report;
};

// Synthetic images of CIFAR-10's shapes, normalized and augmented as the
// ResNet-20 task reads them.
absl::StatusOr<TrainingData> synthetic_images() {
  data::ImageClassificationOptions options;
  options.set = data::ImageSet::kCifar10;
  options.synthetic = true;
  options.seed = 5;
  ASSIGN_OR_RETURN(data::ImageClassificationData images, data::open_image_classification(options));
  return TrainingData{images.train, images.test, images.train_transform, images.test_transform, images.description};
}

absl::StatusOr<TrainedRun> train(const std::string& device_name, bool force_ddp) {
  TaskConfig config;
  config.set_epochs(1);
  config.set_max_steps(4);
  config.set_batch_size(16);
  config.set_num_workers(0);
  config.mutable_sgd()->set_lr(0.05);
  config.mutable_sgd()->set_momentum(0.9);
  config.set_device(device_name);
  config.set_warmup_steps(1);
  config.set_price_per_hour(1);  // the node count comes from the communicator
  config.set_output_dir(join_path(::testing::TempDir(), absl::StrCat(device_name, force_ddp ? "_ddp" : "_plain")));
  const Device device = device_name == "cuda" ? Device::cuda() : Device::cpu();
  std::unique_ptr<collectives::Communicator> comm;
  if (force_ddp) {
    ASSIGN_OR_RETURN(collectives::CommunicatorOptions options, collectives::CommunicatorOptions::from_flags_and_env());
    ASSIGN_OR_RETURN(comm, collectives::connect_world(collectives::LaunchEnvironment{}, device, options));
  }
  ASSIGN_OR_RETURN(TrainingData data, synthetic_images());
  manual_seed(config.seed());
  auto model =
      std::make_shared<nn::Sequential>(std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(3 * 32 * 32, 10));
  ClassificationRecipe recipe(std::move(data), nn::Handle(model), cross_entropy_objective());
  TrainerOptions options;
  options.progress_out = nullptr;
  options.comm = comm.get();
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(config, device, recipe, options));
  RETURN_IF_ERROR(trainer->run().status());
  TrainedRun run;
  for (const autograd::Variable& p : model->parameters()) run.parameters.push_back(to(p.data(), Device::cpu()));
  ASSIGN_OR_RETURN(run.report, read_file(trainer->report_path()));
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

TEST_P(ForceDdp, ReportSplitsTheStepAndCountsTheNode) {
  const std::string& device = GetParam().device;
  if (device == "cuda") TS_SKIP_WITHOUT_CUDA();
  ASSERT_OK_AND_ASSIGN(TrainedRun ddp, train(device, true));
  ASSERT_OK_AND_ASSIGN(Json report, parse_json(ddp.report));
  const Json& breakdown = *report.find("time_breakdown");
  const Json& per_step = *breakdown.find("per_step");
  const double step = per_step.find("step_s")->as_double();
  const double communication = per_step.find("communication_s")->as_double();
  EXPECT_EQ(step, report.find("throughput")->find("mean_s")->as_double());
  // The host clock times each wait on the CPU; CUDA events may round a
  // one-rank wait down to 0 microseconds.
  if (device == "cpu") {
    EXPECT_GT(communication, 0);
  }
  EXPECT_GE(communication, 0);
  EXPECT_DOUBLE_EQ(per_step.find("compute_s")->as_double(), step - communication);
  // The 3 steps after the warm-up step waited for part of the run's
  // communication.
  EXPECT_LE(3 * communication, breakdown.find("buckets")->find("communication")->as_double());
  EXPECT_EQ(report.find("price")->find("nodes")->as_int(), 1);
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
  // Removed by an exit handler, so that also a run that ends in exit()
  // (an ASSERT in a helper that exits, MPI's error handler) leaves none
  // behind; it runs after MPI's own, which are registered later.
  static char session_dir[] = "/tmp/ts_mpi_XXXXXX";
  if (mkdtemp(session_dir) != nullptr) {
    setenv("TMPDIR", session_dir, 1);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(session_dir, ignored);
    });
  }
  const int result = RUN_ALL_TESTS();
  ts::collectives::mpi::finalize();  // the singleton MPI of the DDP run
  return result;
}
