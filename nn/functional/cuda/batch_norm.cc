// CUDA batch normalization in training mode through cuDNN's spatial batch
// norm (statistics over N, H, W; running variance updated with the unbiased
// estimate, as PyTorch). Inputs of any rank >= 2 are described as
// [N, C, prod(rest), 1], row-major or channels-last as x is; channels-last
// runs cuDNN's persistent NHWC kernels, as PyTorch does for that layout,
// through the Ex calls with a workspace and the reserve space the forward
// hands the backward (as PyTorch's cudnn_batch_norm does). The same calls
// fuse a ReLU, or an add and a ReLU, after the normalization (bnOps) for
// channels-last f16, as NVIDIA's ResNet-50 recipes (MXNet's NHWC
// BatchNormAddRelu) use them; PyTorch runs the add and the ReLU as passes
// of their own.
#include <cstdlib>
#include <cstring>
#include <optional>

#include "nn/functional/cuda/cuda_kernels.h"
#include "nn/functional/cuda/cudnn_utils.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

struct BatchNormDescriptors {
  cudnnBatchNormMode_t mode;
  cudnn::TensorDescriptor x;       // also y, dy, dx
  cudnn::TensorDescriptor params;  // [1, C, 1, 1] in the parameter dtype
};

BatchNormDescriptors describe(const Tensor& x) {
  const int64_t plane = x.numel() / (x.size(0) * x.size(1));
  const MemoryFormat format = x.suggest_memory_format();
  const cudnnBatchNormMode_t mode =
      format == MemoryFormat::kChannelsLast ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
  cudnn::TensorDescriptor xd = cudnn::packed(x.dtype(), {x.size(0), x.size(1), plane, 1}, format);
  cudnn::TensorDescriptor pd;
  TS_CUDA_CHECK(cudnnDeriveBNTensorDescriptor(pd.get(), xd.get(), mode));
  return BatchNormDescriptors{mode, std::move(xd), std::move(pd)};
}

// What follows the normalization in the same call: nothing, a ReLU, or an
// add of z and a ReLU. Given a workspace and a reserve space the Ex calls
// run cuDNN's semi-persistent NHWC kernels for channels-last f16 in
// SPATIAL_PERSISTENT mode, which the plain calls never do; every other case
// computes as the plain calls.
struct Fusion {
  Fusion(bool relu, bool add) {
    if (!relu) return;
    ops = add ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    activation.emplace();
    // NaN stays NaN, as our relu keeps it (a loss scaler must see it).
    TS_CUDA_CHECK(cudnnSetActivationDescriptor(activation->get(), CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  }
  cudnnActivationDescriptor_t activation_or_null() const { return activation ? activation->get() : nullptr; }

  cudnnBatchNormOps_t ops = CUDNN_BATCHNORM_OPS_BN;
  std::optional<cudnn::ActivationDescriptor> activation;
};

// A buffer's address for cuDNN; null for an empty one.
void* raw_or_null(const Tensor& t) { return t.defined() && t.numel() > 0 ? t.raw_data() : nullptr; }

// cuDNN needs a scale and shift; an absent affine is weight 1, bias 0.
Tensor param_or(const Tensor& t, double fill, const Tensor& like) {
  if (t.defined()) return t;
  return ts::full(like.shape(), Scalar(fill), {like.dtype(), like.device()});
}

// y = relu?(batch_norm(x) + z?); z (undefined: no add) only with the ReLU.
Tensor forward_training(const Tensor& x, const Tensor& z, bool relu, const Tensor& weight, const Tensor& bias,
                        const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                        const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd) {
  const int device = x.device().index;
  ts::cuda::DeviceGuard guard(device);  // cuDNN runs on the current device
  cudnnHandle_t h = cudnn::handle(device);
  const BatchNormDescriptors d = describe(x);
  const Fusion fusion(relu, z.defined());
  const cudnnActivationDescriptor_t activation = fusion.activation_or_null();
  const Tensor w = param_or(weight, 1, save_mean);
  const Tensor b = param_or(bias, 0, save_mean);
  const cudnn::Scaling s(x.dtype());
  size_t work_bytes = 0, reserve_bytes = 0;
  TS_CUDA_CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
      h, d.mode, fusion.ops, d.x.get(), d.x.get(), d.x.get(), d.params.get(), activation, &work_bytes));
  TS_CUDA_CHECK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, d.mode, fusion.ops, activation, d.x.get(),
                                                                     &reserve_bytes));
  const cudnn::Workspace work(device, work_bytes);
  const Tensor reserve = empty({static_cast<int64_t>(reserve_bytes)}, {DType::kU8, x.device()});
  TS_CUDA_CHECK(cudnnBatchNormalizationForwardTrainingEx(
      h, d.mode, fusion.ops, s.one(), s.zero(), d.x.get(), x.raw_data(), z.defined() ? d.x.get() : nullptr,
      raw_or_null(z), d.x.get(), y.raw_data(), d.params.get(), w.raw_data(), b.raw_data(), momentum,
      running_mean.raw_data(), running_var.raw_data(), eps, save_mean.raw_data(), save_invstd.raw_data(), activation,
      work.get(), work.size(), raw_or_null(reserve), reserve_bytes));
  return reserve;
}

// The gradients of forward_training's: with the ReLU, from its output y
// (and into grad_z where z was added).
void backward_training(const Tensor& x, const Tensor& y, const Tensor& grad_y, bool relu, const Tensor& weight,
                       const Tensor& bias, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& reserve,
                       double eps, const Tensor& grad_x, const Tensor& grad_z, const Tensor& grad_weight,
                       const Tensor& grad_bias) {
  const int device = x.device().index;
  ts::cuda::DeviceGuard guard(device);  // cuDNN runs on the current device
  cudnnHandle_t h = cudnn::handle(device);
  const BatchNormDescriptors d = describe(x);
  const Fusion fusion(relu, grad_z.defined());
  const cudnnActivationDescriptor_t activation = fusion.activation_or_null();
  const cudnnTensorDescriptor_t dz = grad_z.defined() ? d.x.get() : nullptr;
  const Tensor w = param_or(weight, 1, save_mean);
  // The ReLU's backward recomputes its input, so it needs the shift too.
  const Tensor b = relu ? param_or(bias, 0, save_mean) : Tensor();
  const cudnn::Scaling s(x.dtype());
  size_t work_bytes = 0;
  TS_CUDA_CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(
      h, d.mode, fusion.ops, d.x.get(), d.x.get(), d.x.get(), dz, d.x.get(), d.params.get(), activation, &work_bytes));
  const cudnn::Workspace work(device, work_bytes);
  TS_CUDA_CHECK(cudnnBatchNormalizationBackwardEx(
      h, d.mode, fusion.ops, s.one(), s.zero(), s.one(), s.zero(), d.x.get(), x.raw_data(), relu ? d.x.get() : nullptr,
      raw_or_null(y), d.x.get(), grad_y.raw_data(), dz, raw_or_null(grad_z), d.x.get(), grad_x.raw_data(),
      d.params.get(), w.raw_data(), raw_or_null(b), grad_weight.raw_data(), grad_bias.raw_data(), eps,
      save_mean.raw_data(), save_invstd.raw_data(), activation, work.get(), work.size(), raw_or_null(reserve),
      reserve.defined() ? static_cast<size_t>(reserve.numel()) : 0));
}

}  // namespace

Tensor CudaKernels::batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                const Tensor& running_mean, const Tensor& running_var, double momentum,
                                                double eps, const Tensor& y, const Tensor& save_mean,
                                                const Tensor& save_invstd) const {
  return forward_training(x, Tensor(), /*relu=*/false, weight, bias, running_mean, running_var, momentum, eps, y,
                          save_mean, save_invstd);
}

void CudaKernels::batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                               const Tensor& save_mean, const Tensor& save_invstd,
                                               const Tensor& reserve, double eps, const Tensor& grad_x,
                                               const Tensor& grad_weight, const Tensor& grad_bias) const {
  backward_training(x, Tensor(), grad_y, /*relu=*/false, weight, Tensor(), save_mean, save_invstd, reserve, eps, grad_x,
                    Tensor(), grad_weight, grad_bias);
}

// cuDNN documents the fused ops for NHWC f16 data in SPATIAL_PERSISTENT mode
// (which channels-last selects), with C a multiple of 4. TS_CUDNN_FUSED_BN_RELU=0
// composes them instead, so a run can measure what the fusion gains.
bool CudaKernels::fuses_batch_norm_relu(const Tensor& x) const {
  static const bool enabled = [] {
    const char* env = std::getenv("TS_CUDNN_FUSED_BN_RELU");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return enabled && x.dtype() == DType::kF16 && x.dim() == 4 &&
         x.suggest_memory_format() == MemoryFormat::kChannelsLast && x.size(1) % 4 == 0;
}

Tensor CudaKernels::batch_norm_relu_forward_training(const Tensor& x, const Tensor& z, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, double momentum, double eps,
                                                     const Tensor& y, const Tensor& save_mean,
                                                     const Tensor& save_invstd) const {
  TS_CHECK(fuses_batch_norm_relu(x), "batch_norm_relu: no fused kernel for ", x.describe());
  return forward_training(x, z, /*relu=*/true, weight, bias, running_mean, running_var, momentum, eps, y, save_mean,
                          save_invstd);
}

void CudaKernels::batch_norm_relu_backward_training(const Tensor& x, const Tensor& y, const Tensor& grad_y,
                                                    const Tensor& weight, const Tensor& bias, const Tensor& save_mean,
                                                    const Tensor& save_invstd, const Tensor& reserve, double eps,
                                                    const Tensor& grad_x, const Tensor& grad_z,
                                                    const Tensor& grad_weight, const Tensor& grad_bias) const {
  backward_training(x, y, grad_y, /*relu=*/true, weight, bias, save_mean, save_invstd, reserve, eps, grad_x, grad_z,
                    grad_weight, grad_bias);
}

}  // namespace ts::nn::functional
