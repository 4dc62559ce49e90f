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

void CudaBackend::unary(UnaryOp op, const Tensor& a, const Tensor& out) {
  const auto layout = make_layout<2>({&out, &a});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_unary(op, [&](auto f, auto rule) {
      using Rule = decltype(rule);
      if constexpr (!has_kernel<Rule, T>()) {
        no_kernel("cuda", op_name(op), a.dtype());
      } else {
        using R = std::conditional_t<Rule::value == DTypeRule::kPredicate, bool, T>;
        launch_elementwise(device, stream, layout, static_cast<R*>(out.raw_data()), f, Input<T>::of(a));
      }
    });
  });
}

}  // namespace ts::cuda
