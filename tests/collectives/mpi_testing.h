// Support for gtest suites that run as several ranks under mpirun (see
// mpi_test.sh): the world communicator, per-rank random inputs every rank can
// regenerate, and the main that reports each rank's result to the wrapper.
#pragma once

#include <cstdint>
#include <random>

#include "collectives/mpi/mpi_communicator.h"
#include "tensor/tensor.h"

namespace ts::collectives::mpitest {

// The communicator over every rank, created by the test main (timeout from
// TS_COLLECTIVES_TIMEOUT, default 60 s so a broken test fails, not hangs).
mpi::MpiCommunicator& world();

// One seed for the whole job (rank 0's test seed, broadcast), so any rank can
// regenerate any other rank's inputs.
uint64_t job_seed();
std::mt19937_64 rank_rng(int rank, uint64_t salt);

}  // namespace ts::collectives::mpitest
