// Unary elementwise ops: one kernel per functor and dtype the frontends send.

// Relu and Sign compare with zero generically; for u8 that comparison is
// constant, which is what the unsigned instantiation should do.
#pragma nv_diag_suppress 186

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {

absl::Status CudaBackend::unary(UnaryOp op, const Tensor& a, const Tensor& out) {
  ASSIGN_OR_RETURN(auto layout, make_layout<2>({&out, &a}));
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  return visit_dtype(a.dtype(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    auto apply = [&](auto f, auto result_tag) -> absl::Status {
      using F = decltype(f);
      using R = typename decltype(result_tag)::type;
      if constexpr (!supports<F, T>()) {
        return unsupported(op_name(op), a.dtype());
      } else {
        return launch_elementwise(device, stream, layout, static_cast<R*>(out.raw_data()), f, Input<T>::of(a));
      }
    };
    return functors::visit_unary(
        op, [&](auto f) { return apply(f, TypeTag<T>{}); }, [&](auto f) { return apply(f, TypeTag<bool>{}); });
  });
}

}  // namespace ts::cuda
