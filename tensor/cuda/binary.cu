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

void CudaBackend::binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) {
  const auto layout = make_layout<3>({&out, tensor_of(a), tensor_of(b)});
  const DType dtype = a.is_scalar() ? b.tensor.dtype() : a.tensor.dtype();
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_binary(op, [&](auto f, auto rule) {
      using Rule = decltype(rule);
      if constexpr (!has_kernel<Rule, T>()) {
        no_kernel("cuda", op_name(op), dtype);
      } else {
        using R = std::conditional_t<Rule::value == DTypeRule::kPredicate, bool, T>;
        launch_elementwise(device, stream, layout, static_cast<R*>(out.raw_data()), f, Input<T>::of(a),
                           Input<T>::of(b));
      }
    });
  });
}

void CudaBackend::where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) {
  const auto layout = make_layout<4>({&out, &cond, tensor_of(a), tensor_of(b)});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise(device, stream, layout, static_cast<T*>(out.raw_data()), Select{}, Input<bool>::of(cond),
                       Input<T>::of(a), Input<T>::of(b));
  });
}

}  // namespace ts::cuda
