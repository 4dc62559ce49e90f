// CUDA batch normalization in training mode through cuDNN's spatial batch
// norm (statistics over N, H, W; running variance updated with the unbiased
// estimate, as PyTorch). Inputs of any rank >= 2 are described as
// [N, C, prod(rest), 1], row-major or channels-last as x is; channels-last
// runs cuDNN's persistent NHWC kernels, as PyTorch does for that layout,
// through the Ex calls with a workspace and the reserve space the forward
// hands the backward (as PyTorch's cudnn_batch_norm does).
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

// Batch norm alone (no fused add or activation), through the Ex calls:
// given a workspace and a reserve space they run cuDNN's semi-persistent
// NHWC kernels for channels-last f16 in SPATIAL_PERSISTENT mode, which the
// plain calls never do; every other case computes as the plain calls.
constexpr cudnnBatchNormOps_t kOps = CUDNN_BATCHNORM_OPS_BN;

// A buffer's address for cuDNN; null for an empty one.
void* raw_or_null(const Tensor& t) { return t.defined() && t.numel() > 0 ? t.raw_data() : nullptr; }

// cuDNN needs a scale and shift; an absent affine is weight 1, bias 0.
Tensor param_or(const Tensor& t, double fill, const Tensor& like) {
  if (t.defined()) return t;
  return ts::full(like.shape(), Scalar(fill), {like.dtype(), like.device()});
}

}  // namespace

Tensor CudaKernels::batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                const Tensor& running_mean, const Tensor& running_var, double momentum,
                                                double eps, const Tensor& y, const Tensor& save_mean,
                                                const Tensor& save_invstd) const {
  const int device = x.device().index;
  ts::cuda::DeviceGuard guard(device);  // cuDNN runs on the current device
  cudnnHandle_t h = cudnn::handle(device);
  const BatchNormDescriptors d = describe(x);
  const Tensor w = param_or(weight, 1, save_mean);
  const Tensor b = param_or(bias, 0, save_mean);
  const cudnn::Scaling s(x.dtype());
  size_t work_bytes = 0, reserve_bytes = 0;
  TS_CUDA_CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
      h, d.mode, kOps, d.x.get(), d.x.get(), d.x.get(), d.params.get(), nullptr, &work_bytes));
  TS_CUDA_CHECK(
      cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, d.mode, kOps, nullptr, d.x.get(), &reserve_bytes));
  const cudnn::Workspace work(device, work_bytes);
  const Tensor reserve = empty({static_cast<int64_t>(reserve_bytes)}, {DType::kU8, x.device()});
  TS_CUDA_CHECK(cudnnBatchNormalizationForwardTrainingEx(
      h, d.mode, kOps, s.one(), s.zero(), d.x.get(), x.raw_data(), nullptr, nullptr, d.x.get(), y.raw_data(),
      d.params.get(), w.raw_data(), b.raw_data(), momentum, running_mean.raw_data(), running_var.raw_data(), eps,
      save_mean.raw_data(), save_invstd.raw_data(), nullptr, work.get(), work.size(), raw_or_null(reserve),
      reserve_bytes));
  return reserve;
}

void CudaKernels::batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                               const Tensor& save_mean, const Tensor& save_invstd,
                                               const Tensor& reserve, double eps, const Tensor& grad_x,
                                               const Tensor& grad_weight, const Tensor& grad_bias) const {
  const int device = x.device().index;
  ts::cuda::DeviceGuard guard(device);  // cuDNN runs on the current device
  cudnnHandle_t h = cudnn::handle(device);
  const BatchNormDescriptors d = describe(x);
  const Tensor w = param_or(weight, 1, save_mean);
  const cudnn::Scaling s(x.dtype());
  size_t work_bytes = 0;
  TS_CUDA_CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(
      h, d.mode, kOps, d.x.get(), d.x.get(), d.x.get(), nullptr, d.x.get(), d.params.get(), nullptr, &work_bytes));
  const cudnn::Workspace work(device, work_bytes);
  TS_CUDA_CHECK(cudnnBatchNormalizationBackwardEx(
      h, d.mode, kOps, s.one(), s.zero(), s.one(), s.zero(), d.x.get(), x.raw_data(), nullptr, nullptr, d.x.get(),
      grad_y.raw_data(), nullptr, nullptr, d.x.get(), grad_x.raw_data(), d.params.get(), w.raw_data(), nullptr,
      grad_weight.raw_data(), grad_bias.raw_data(), eps, save_mean.raw_data(), save_invstd.raw_data(), nullptr,
      work.get(), work.size(), raw_or_null(reserve), reserve.defined() ? static_cast<size_t>(reserve.numel()) : 0));
}

}  // namespace ts::nn::functional
