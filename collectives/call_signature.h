// The debug mode's fingerprint of one collective call, shared by every
// backend: before a collective runs, the ranks allgather their signatures
// (sequence number, op, shape, dtype) and fail with the first mismatch,
// naming both ranks and what differs, instead of running a collective that
// would hang or scramble data. A plain struct of fixed size, so it travels
// as bytes between ranks of the same build.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::collectives {

struct CallSignature {
  static constexpr int kMaxDims = 8;
  int64_t sequence = 0;
  char op[32] = {};    // "allreduce(sum)", "broadcast(root 1)", ...
  int32_t dtype = -1;  // -1: no tensor (barrier)
  int32_t ndim = 0;    // -1: more than kMaxDims dims (numel still compared)
  int64_t dims[kMaxDims] = {};
  int64_t numel = 0;
};

// `tensor` may be undefined (barrier): no dtype, no shape.
CallSignature make_call_signature(int64_t sequence, absl::string_view op, const Tensor& tensor);
// "allreduce(sum) #3 on f32[2, 3]"
std::string describe_call_signature(const CallSignature& s);
// "" when equal, else what differs: "op", "shape", "dtype", "sequence number".
std::string call_signature_difference(const CallSignature& a, const CallSignature& b);
// OK when every rank's signature equals rank 0's; else a FailedPrecondition
// naming the first rank that differs, as seen on rank `observer`.
absl::Status check_call_signatures(absl::Span<const CallSignature> all, int observer);

}  // namespace ts::collectives
