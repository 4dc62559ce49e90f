#include "collectives/call_signature.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ts::collectives {

CallSignature make_call_signature(int64_t sequence, absl::string_view op, const Tensor& tensor) {
  CallSignature s;
  s.sequence = sequence;
  const size_t n = std::min(op.size(), sizeof(s.op) - 1);
  std::memcpy(s.op, op.data(), n);
  if (!tensor.defined()) return s;
  s.dtype = static_cast<int32_t>(tensor.dtype());
  s.numel = tensor.numel();
  s.ndim = tensor.dim() > CallSignature::kMaxDims ? -1 : static_cast<int32_t>(tensor.dim());
  for (int d = 0; d < s.ndim; ++d) s.dims[d] = tensor.size(d);
  return s;
}

std::string describe_call_signature(const CallSignature& s) {
  if (s.dtype < 0) return absl::StrCat(s.op, " #", s.sequence);
  const std::string shape = s.ndim < 0
                                ? absl::StrCat("[", s.numel, " elements in > ", CallSignature::kMaxDims, " dims]")
                                : absl::StrCat("[", absl::StrJoin(s.dims, s.dims + s.ndim, ", "), "]");
  return absl::StrCat(s.op, " #", s.sequence, " on ", dtype_name(static_cast<DType>(s.dtype)), shape);
}

std::string call_signature_difference(const CallSignature& a, const CallSignature& b) {
  std::vector<std::string> what;
  if (a.sequence != b.sequence) what.push_back("sequence number");
  if (std::strncmp(a.op, b.op, sizeof(a.op)) != 0) what.push_back("op");
  if (a.dtype != b.dtype) what.push_back("dtype");
  if (a.ndim != b.ndim || a.numel != b.numel || !std::equal(a.dims, a.dims + std::max(a.ndim, 0), b.dims)) {
    what.push_back("shape");
  }
  return absl::StrJoin(what, ", ");
}

absl::Status check_call_signatures(absl::Span<const CallSignature> all, int observer) {
  if (all.empty()) return absl::OkStatus();
  const CallSignature& reference = all[0];
  for (size_t r = 1; r < all.size(); ++r) {
    const std::string diff = call_signature_difference(reference, all[r]);
    if (diff.empty()) continue;
    return absl::FailedPreconditionError(absl::StrCat("collective mismatch (debug check, seen on rank ", observer,
                                                      "): rank 0 called ", describe_call_signature(reference),
                                                      " but rank ", r, " called ", describe_call_signature(all[r]),
                                                      " (", diff, " differ)"));
  }
  return absl::OkStatus();
}

}  // namespace ts::collectives
