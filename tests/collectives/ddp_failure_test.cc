// One rank exits in the middle of DDP training: the others' next backward
// (whose bucket allreduce the dead rank never joins) fails within the
// timeout with an error naming the collective, the missing rank and the
// elapsed time, instead of hanging. mpi_test.sh checks only the survivors.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "autograd/variable.h"
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
  std::unique_ptr<mpi::MpiCommunicator> comm = value_or_die(mpi::MpiCommunicator::create(options));
  const int last = comm->world_size() - 1;
  std::shared_ptr<nn::Module> model = value_or_die(nn::Linear::create(8, 3));
  auto ddp = value_or_die(DistributedDataParallel::create(model, comm.get()));
  optim::SgdOptions sgd_options;
  sgd_options.lr = 0.1;
  optim::Sgd sgd = value_or_die(optim::Sgd::create(model->named_parameters(), sgd_options));
  const Tensor x = value_or_die(randn({4, 8}));
  const Tensor y = value_or_die(zeros({4}, {DType::kI64}));
  for (int step = 0; step < 3; ++step) {
    if (step == 2 && comm->rank() == last) {
      std::fflush(nullptr);
      _exit(0);  // dies mid-training without finalizing, as a crashed rank would
    }
    sgd.zero_grad();
    Variable logits = value_or_die(ddp->forward(Variable(x)));
    Variable loss = value_or_die(nn::cross_entropy(logits, y));
    const absl::Time start = absl::Now();
    const absl::Status status = loss.backward();
    if (step < 2) {
      ASSERT_OK(status);
      ASSERT_OK(sgd.step());
      continue;
    }
    EXPECT_LT(absl::Now() - start, absl::Seconds(4));
    expect_error(status, status.code(),
                 {"allreduce(avg)", "timed out after", absl::StrCat("rank ", last, " did not reach it")});
  }
}

}  // namespace
}  // namespace ts::collectives::ddp
