// One rank exits in the middle of DDP training: the others' next backward
// (whose bucket allreduce the dead rank never joins) throws within the
// timeout an error naming the collective, the missing rank and the elapsed
// time, instead of hanging. mpi_test.sh checks only the survivors.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "autograd/variable.h"
#include "base/error.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "gtest/gtest.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::ddp {
namespace {

using autograd::Variable;
using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

TEST(DdpFailure, RankExitingMidTrainingIsNamedByTheOthers) {
  CommunicatorOptions options;
  options.timeout = absl::Seconds(2);
  // The timeout, the liveness probe's grace and a busy machine's slack: what
  // tells a timeout from a hang.
  const absl::Duration fail_within = options.timeout + absl::Seconds(10);
  std::unique_ptr<mpi::MpiCommunicator> comm = value_or_die(mpi::MpiCommunicator::create(options));
  const int last = comm->world_size() - 1;
  auto model = std::make_shared<nn::Linear>(8, 3);
  auto ddp = value_or_die(DistributedDataParallel::create(model, comm.get()));
  optim::SgdOptions sgd_options;
  sgd_options.lr = 0.1;
  optim::Sgd sgd(model->named_parameters(), sgd_options);
  const Tensor x = randn({4, 8});
  const Tensor y = zeros({4}, {DType::kI64});
  for (int step = 0; step < 3; ++step) {
    if (step == 2 && comm->rank() == last) {
      std::fflush(nullptr);
      _exit(0);  // dies mid-training without finalizing, as a crashed rank would
    }
    sgd.zero_grad();
    ASSERT_OK(ddp->begin_step());
    const Variable loss = nn::cross_entropy(model->forward(Variable(x)), y);
    const absl::Time start = absl::Now();
    // The bucket's failed allreduce stops the backward with its error.
    const absl::Status status = capture([&] { loss.backward(); });
    if (step < 2) {
      ASSERT_OK(status);
      sgd.step();
      continue;
    }
    EXPECT_LT(absl::Now() - start, fail_within);
    expect_error(status, status.code(),
                 {"allreduce(avg)", "timed out after", absl::StrCat("rank ", last, " did not reach it")});
  }
}

}  // namespace
}  // namespace ts::collectives::ddp
