// The two-operand elementwise families: binary ops and where. Either operand
// may be a scalar, passed to the kernel by value already in the compute type.
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {
namespace {

struct Select {
  template <typename V>
  __device__ V operator()(bool cond, V a, V b) const {
    return cond ? a : b;
  }
};

const Tensor* tensor_of(const Operand& x) { return x.is_scalar() ? nullptr : &x.tensor; }

}  // namespace

absl::Status CudaBackend::binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) {
  ASSIGN_OR_RETURN(auto layout, make_layout<3>({&out, tensor_of(a), tensor_of(b)}));
  const DType dtype = a.is_scalar() ? b.tensor.dtype() : a.tensor.dtype();
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  return visit_dtype(dtype, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    auto apply = [&](auto f, auto result_tag) -> absl::Status {
      using F = decltype(f);
      using R = typename decltype(result_tag)::type;
      if constexpr (!supports<F, T>()) {
        return unsupported(op_name(op), dtype);
      } else {
        return launch_elementwise(device, stream, layout, static_cast<R*>(out.raw_data()), f, Input<T>::of(a),
                                  Input<T>::of(b));
      }
    };
    return functors::visit_binary(
        op, [&](auto f) { return apply(f, TypeTag<T>{}); }, [&](auto f) { return apply(f, TypeTag<bool>{}); });
  });
}

absl::Status CudaBackend::where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) {
  ASSIGN_OR_RETURN(auto layout, make_layout<4>({&out, &cond, tensor_of(a), tensor_of(b)}));
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  return visit_dtype(out.dtype(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    return launch_elementwise(device, stream, layout, static_cast<T*>(out.raw_data()), Select{},
                              Input<bool>::of(cond), Input<T>::of(a), Input<T>::of(b));
  });
}

}  // namespace ts::cuda
