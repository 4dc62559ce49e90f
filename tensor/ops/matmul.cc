// torch.matmul semantics on top of one batched-GEMM kernel per backend.
#include "absl/strings/str_cat.h"
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops/checks.h"
#include "tensor/status_macros.h"

namespace ts {
namespace {

// Whether the last two dims of t can be handed to a GEMM as they are: one of
// them has unit stride and the other a leading dimension at least as large as
// the rows it spans.
bool gemm_compatible(const Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t rs = t.stride(-2), cs = t.stride(-1);
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) return true;
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) return true;
  return false;
}

// t (with batch dims already broadcast to `batch`) as a 3-D [B, r, c] view
// the kernel accepts, copying only when no such view exists.
absl::StatusOr<Tensor> as_batched(const Tensor& t, Dims batch) {
  Shape target(batch.begin(), batch.end());
  target.push_back(t.size(-2));
  target.push_back(t.size(-1));
  ASSIGN_OR_RETURN(Tensor expanded, t.expand(target));
  const int64_t b = shape_numel(batch);
  // All batch dims with one common stride (or broadcast) collapse into one.
  absl::StatusOr<Tensor> view = expanded.view({b, t.size(-2), t.size(-1)});
  if (!view.ok()) {
    // A broadcast batch with stride 0 in every dim also collapses: view it by hand.
    bool all_broadcast = true;
    for (size_t d = 0; d < batch.size(); ++d) all_broadcast = all_broadcast && (expanded.strides()[d] == 0 || batch[d] == 1);
    if (all_broadcast) {
      view = Tensor(expanded.storage(), {b, t.size(-2), t.size(-1)}, {0, expanded.stride(-2), expanded.stride(-1)},
                    expanded.offset(), expanded.dtype());
    }
  }
  if (view.ok() && gemm_compatible(*view)) return *view;
  ASSIGN_OR_RETURN(Tensor dense, clone(expanded));
  return dense.view({b, t.size(-2), t.size(-1)});
}

}  // namespace

absl::StatusOr<Tensor> matmul(const Tensor& a_in, const Tensor& b_in) {
  RETURN_IF_ERROR(ops_internal::check_same_device("matmul", {&a_in, &b_in}));
  if (a_in.dim() == 0 || b_in.dim() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("matmul: operands must have at least one dim, got ",
                                                   a_in.describe(), " and ", b_in.describe()));
  }
  if (a_in.dtype() != b_in.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul: dtypes differ: ", a_in.describe(), " and ", b_in.describe()));
  }
  RETURN_IF_ERROR(ops_internal::check_floating("matmul", a_in));
  // Vectors become matrices; their extra dim is dropped from the result.
  ASSIGN_OR_RETURN(Tensor a, a_in.dim() == 1 ? a_in.unsqueeze(0) : absl::StatusOr<Tensor>(a_in));
  ASSIGN_OR_RETURN(Tensor b, b_in.dim() == 1 ? b_in.unsqueeze(1) : absl::StatusOr<Tensor>(b_in));
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  if (b.size(-2) != k) {
    return absl::InvalidArgumentError(absl::StrCat("matmul: shapes ", shape_str(a_in.shape()), " and ",
                                                   shape_str(b_in.shape()), " cannot be multiplied (",
                                                   k, " != ", b.size(-2), ")"));
  }
  ASSIGN_OR_RETURN(Shape batch, broadcast_shapes("matmul",
                                                 Dims(a.shape()).subspan(0, a.dim() - 2),
                                                 Dims(b.shape()).subspan(0, b.dim() - 2)));
  Shape out_shape = batch;
  if (a_in.dim() > 1) out_shape.push_back(m);
  if (b_in.dim() > 1) out_shape.push_back(n);
  ASSIGN_OR_RETURN(Tensor out, empty(out_shape, {a.dtype(), a.device()}));
  if (out.numel() == 0) return out;
  if (k == 0) {
    RETURN_IF_ERROR(fill_(out, 0));
    return out;
  }
  ASSIGN_OR_RETURN(Tensor a3, as_batched(a, batch));
  ASSIGN_OR_RETURN(Tensor b3, as_batched(b, batch));
  ASSIGN_OR_RETURN(Tensor out3, out.view({shape_numel(batch), m, n}));
  RETURN_IF_ERROR(backend_for(out.device()).matmul(a3, b3, out3));
  return out;
}

}  // namespace ts
