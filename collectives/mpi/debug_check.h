// Debug mode of the MPI backend: before a collective runs, every rank
// gathers every rank's (sequence number, op, shape, dtype, root) and fails
// with the first mismatch, naming both ranks and what differs, instead of
// running a collective that would hang or scramble data.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "collectives/mpi/engine.h"
#include "tensor/tensor.h"

namespace ts::collectives::mpi {

struct Signature {
  static constexpr int kMaxDims = 8;
  int64_t sequence = 0;
  char op[32] = {};  // "allreduce(sum)", "broadcast(root 1)", ...
  int32_t dtype = 0;
  int32_t ndim = 0;  // -1: more than kMaxDims dims (numel still compared)
  int64_t dims[kMaxDims] = {};
  int64_t numel = 0;
};

Signature make_signature(int64_t sequence, absl::string_view op, const Tensor& tensor);
// "allreduce(sum) #3 on f32[2, 3]"
std::string describe_signature(const Signature& s);
// "" when equal, else what differs: "op", "shape", "dtype", "sequence number".
std::string signature_difference(const Signature& a, const Signature& b);

// A round that allgathers `mine` on `comm` and fails on the first rank whose
// signature differs from rank 0's.
Round signature_check_round(MPI_Comm comm, int rank, int world_size, const Signature& mine);

}  // namespace ts::collectives::mpi
