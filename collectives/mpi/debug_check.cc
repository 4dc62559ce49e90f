#include "collectives/mpi/debug_check.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectives/mpi/mpi_runtime.h"

namespace ts::collectives::mpi {

Signature make_signature(int64_t sequence, absl::string_view op, const Tensor& tensor) {
  Signature s;
  s.sequence = sequence;
  const size_t n = std::min(op.size(), sizeof(s.op) - 1);
  std::memcpy(s.op, op.data(), n);
  s.dtype = static_cast<int32_t>(tensor.dtype());
  s.numel = tensor.numel();
  s.ndim = tensor.dim() > Signature::kMaxDims ? -1 : static_cast<int32_t>(tensor.dim());
  for (int d = 0; d < s.ndim; ++d) s.dims[d] = tensor.size(d);
  return s;
}

std::string describe_signature(const Signature& s) {
  const std::string shape =
      s.ndim < 0 ? absl::StrCat("[", s.numel, " elements in > ", Signature::kMaxDims, " dims]")
                 : absl::StrCat("[", absl::StrJoin(s.dims, s.dims + s.ndim, ", "), "]");
  return absl::StrCat(s.op, " #", s.sequence, " on ", dtype_name(static_cast<DType>(s.dtype)), shape);
}

std::string signature_difference(const Signature& a, const Signature& b) {
  std::vector<std::string> what;
  if (a.sequence != b.sequence) what.push_back("sequence number");
  if (std::strncmp(a.op, b.op, sizeof(a.op)) != 0) what.push_back("op");
  if (a.dtype != b.dtype) what.push_back("dtype");
  if (a.ndim != b.ndim || a.numel != b.numel ||
      !std::equal(a.dims, a.dims + std::max(a.ndim, 0), b.dims)) {
    what.push_back("shape");
  }
  return absl::StrJoin(what, ", ");
}

Round signature_check_round(MPI_Comm comm, int rank, int world_size, const Signature& mine) {
  auto all = std::make_shared<std::vector<Signature>>(world_size);
  auto own = std::make_shared<Signature>(mine);
  return Round{
      [=](std::vector<MPI_Request>& requests) -> absl::Status {
        MPI_Request request;
        if (absl::Status s = check(MPI_Iallgather(own.get(), sizeof(Signature), MPI_BYTE, all->data(),
                                                  sizeof(Signature), MPI_BYTE, comm, &request),
                                   "MPI_Iallgather (debug signature check)");
            !s.ok()) {
          return s;
        }
        requests.push_back(request);
        return absl::OkStatus();
      },
      [=]() -> absl::Status {
        const Signature& reference = (*all)[0];
        for (int r = 1; r < world_size; ++r) {
          const std::string diff = signature_difference(reference, (*all)[r]);
          if (diff.empty()) continue;
          return absl::FailedPreconditionError(absl::StrCat(
              "collective mismatch (debug check, seen on rank ", rank, "): rank 0 called ",
              describe_signature(reference), " but rank ", r, " called ",
              describe_signature((*all)[r]), " (", diff, " differ)"));
        }
        return absl::OkStatus();
      },
      {}};
}

}  // namespace ts::collectives::mpi
