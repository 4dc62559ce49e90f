// main() of the multi-process suites: runs the tests on every rank, then
// writes "<rank> <result>" to $TS_MPI_TEST_STATUS_DIR/rank<r> so the wrapper
// can tell which ranks passed (mpirun's own exit code does not say when a
// test deliberately kills a rank).
#include <cstdio>
#include <fstream>
#include <string>

#include "collectives/mpi/mpi_runtime.h"
#include "gtest/gtest.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::mpitest {

namespace {
std::unique_ptr<mpi::MpiCommunicator> g_world;
uint64_t g_seed = 0;
}  // namespace

mpi::MpiCommunicator& world() { return *g_world; }
uint64_t job_seed() { return g_seed; }

std::mt19937_64 rank_rng(int rank, uint64_t salt) {
  std::seed_seq seq{g_seed, static_cast<uint64_t>(rank), salt};
  return std::mt19937_64(seq);
}

}  // namespace ts::collectives::mpitest

int main(int argc, char** argv) {
  namespace tc = ts::collectives;
  namespace mpitest = ts::collectives::mpitest;
  ::testing::InitGoogleTest(&argc, argv);
  absl::StatusOr<tc::CommunicatorOptions> options = tc::CommunicatorOptions::from_flags_and_env();
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  if (!std::getenv("TS_COLLECTIVES_TIMEOUT")) options->timeout = absl::Seconds(60);
  absl::StatusOr<std::unique_ptr<tc::mpi::MpiCommunicator>> world = tc::mpi::MpiCommunicator::create(*options);
  if (!world.ok()) {
    std::fprintf(stderr, "cannot create the world communicator: %s\n", std::string(world.status().message()).c_str());
    return 2;
  }
  mpitest::g_world = *std::move(world);
  ts::Tensor seed = ts::Tensor::allocate({1}, ts::DType::kI64, ts::Device::cpu());
  seed.data<int64_t>()[0] = static_cast<int64_t>(ts::testing::test_seed());
  if (absl::Status s = mpitest::g_world->broadcast(seed, 0).wait(); !s.ok()) {
    std::fprintf(stderr, "seed broadcast failed: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  mpitest::g_seed = static_cast<uint64_t>(seed.data<int64_t>()[0]);
  const int rank = mpitest::g_world->rank();
  if (rank == 0) std::printf("TS_TEST_SEED=%llu\n", static_cast<unsigned long long>(mpitest::g_seed));
  // Every rank inherits Bazel's GTEST_OUTPUT, and ranks writing one XML file
  // at once leave it unreadable: rank 0 writes the report, the others' results
  // reach the wrapper through their status files. InitGoogleTest has already
  // installed the XML writer, so clearing the flag now would be too late.
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_xml_generator());
  }

  const int result = RUN_ALL_TESTS();
  if (const char* dir = std::getenv("TS_MPI_TEST_STATUS_DIR")) {
    std::ofstream(std::string(dir) + "/rank" + std::to_string(rank)) << result << "\n";
  }
  mpitest::g_world.reset();
  tc::mpi::finalize();
  return result;
}
