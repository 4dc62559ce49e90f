// torch.matmul semantics on top of one batched-GEMM kernel per backend.
#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

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
Tensor as_batched(const Tensor& t, Dims batch) {
  Shape target(batch.begin(), batch.end());
  target.push_back(t.size(-2));
  target.push_back(t.size(-1));
  const Tensor expanded = t.expand(target);
  const int64_t b = shape_numel(batch);
  // All batch dims with one common stride (or broadcast) collapse into one.
  std::optional<Tensor> view = expanded.try_view({b, t.size(-2), t.size(-1)});
  if (!view) {
    // A broadcast batch with stride 0 in every dim also collapses: view it by hand.
    bool all_broadcast = true;
    for (size_t d = 0; d < batch.size(); ++d)
      all_broadcast = all_broadcast && (expanded.strides()[d] == 0 || batch[d] == 1);
    if (all_broadcast) {
      view = Tensor(expanded.storage(), {b, t.size(-2), t.size(-1)}, {0, expanded.stride(-2), expanded.stride(-1)},
                    expanded.offset(), expanded.dtype());
    }
  }
  if (view && gemm_compatible(*view)) return *view;
  return contiguous(expanded).view({b, t.size(-2), t.size(-1)});
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_same_device("matmul", {&a_in, &b_in});
  TS_CHECK(a_in.dim() > 0 && b_in.dim() > 0, "matmul: operands must have at least one dim, got ", a_in.describe(),
           " and ", b_in.describe());
  TS_CHECK(a_in.dtype() == b_in.dtype(), "matmul: dtypes differ: ", a_in.describe(), " and ", b_in.describe());
  check_floating("matmul", a_in);
  // Vectors become matrices; their extra dim is dropped from the result.
  const Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  TS_CHECK(b.size(-2) == k, "matmul: shapes ", shape_str(a_in.shape()), " and ", shape_str(b_in.shape()),
           " cannot be multiplied (", k, " != ", b.size(-2), ")");
  const Shape batch =
      broadcast_shapes("matmul", Dims(a.shape()).subspan(0, a.dim() - 2), Dims(b.shape()).subspan(0, b.dim() - 2));
  Shape out_shape = batch;
  if (a_in.dim() > 1) out_shape.push_back(m);
  if (b_in.dim() > 1) out_shape.push_back(n);
  Tensor out = empty(out_shape, {a.dtype(), a.device()});
  if (out.numel() == 0) return out;
  if (k == 0) {
    fill_(out, 0);
    return out;
  }
  backend_for(out.device()).matmul(as_batched(a, batch), as_batched(b, batch), out.view({shape_numel(batch), m, n}));
  return out;
}

}  // namespace ts
