// The fused gradients of the unary and binary elementwise ops: one kernel per
// op computes grad * derivative from the saved values the op's functor reads
// (tensor/functors.h), where autograd would otherwise chain several ops.

// Functors compare with zero generically; harmless for the types used here.
#pragma nv_diag_suppress 186

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {
namespace {

template <typename F>
struct UnaryGradOf {
  F f;
  template <typename V>
  __device__ V operator()(V g, V x, V y) const {
    return f.grad(g, x, y);
  }
};

template <typename F, int kInput>
struct BinaryGradOf {
  F f;
  template <typename V>
  __device__ V operator()(V g, V a, V b, V y) const {
    if constexpr (kInput == 0) {
      return f.grad_a(g, a, b, y);
    } else {
      return f.grad_b(g, a, b, y);
    }
  }
};

const Tensor* tensor_of(const Operand& x) { return x.is_scalar() ? nullptr : &x.tensor; }
const Tensor* tensor_of(const Tensor& t) { return t.defined() ? &t : nullptr; }

}  // namespace

void CudaBackend::unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& out) {
  const auto layout = make_layout<4>({&out, &grad, tensor_of(x), tensor_of(y)});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_unary(op, [&](auto f, auto rule) {
      if constexpr (!is_float_v<T> || decltype(rule)::value == DTypeRule::kPredicate) {
        no_kernel("cuda", op_name(op), out.dtype());
      } else {
        launch_elementwise(device, stream, layout, static_cast<T*>(out.raw_data()), UnaryGradOf<decltype(f)>{f},
                           Input<T>::of(grad), Input<T>::of_optional(x), Input<T>::of_optional(y));
      }
    });
  });
}

void CudaBackend::binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b,
                              const Tensor& y, const Tensor& out) {
  const auto layout = make_layout<5>({&out, &grad, tensor_of(a), tensor_of(b), tensor_of(y)});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_binary(op, [&](auto f, auto rule) {
      using F = decltype(f);
      if constexpr (!is_float_v<T> || decltype(rule)::value == DTypeRule::kPredicate) {
        no_kernel("cuda", op_name(op), out.dtype());
      } else {
        const auto launch = [&](auto partial) {
          launch_elementwise(device, stream, layout, static_cast<T*>(out.raw_data()), partial, Input<T>::of(grad),
                             Input<T>::of(a), Input<T>::of(b), Input<T>::of_optional(y));
        };
        if (input == 0) {
          launch(BinaryGradOf<F, 0>{f});
        } else {
          launch(BinaryGradOf<F, 1>{f});
        }
      }
    });
  });
}

}  // namespace ts::cuda
