// CUDA convolution, 2-D and 3-D, through cuDNN. The algorithm of each
// direction is chosen once per (device, shape, dtype, math mode,
// determinism) by timing cuDNN's candidates (cudnnFind*Ex, on the real
// tensors, with workspace from the caching allocator) and cached; later calls
// look it up. Short of device memory, a call falls back to a slower algorithm
// with a smaller workspace. conv_algorithms.h says which candidates count.
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "nn/functional/cuda/conv_algorithms.h"
#include "nn/functional/cuda/cuda_kernels.h"
#include "nn/functional/cuda/cudnn_utils.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"
#include "tensor/precision.h"

namespace ts::nn::functional {
namespace {

enum class Direction { kForward, kBackwardData, kBackwardFilter };

// Descriptors of one convolution call.
struct ConvDescriptors {
  cudnn::TensorDescriptor x, y;
  cudnn::FilterDescriptor w;
  cudnn::ConvolutionDescriptor conv;
};

// The spatial dims of `g` (depth only for a 3-D convolution) as cuDNN's ints.
std::vector<int> spatial(const ConvGeometry& g, int64_t d, int64_t h, int64_t w) {
  if (g.spatial_dims == 3) return {static_cast<int>(d), static_cast<int>(h), static_cast<int>(w)};
  return {static_cast<int>(h), static_cast<int>(w)};
}
std::vector<int64_t> with_batch_and_channels(int64_t n, int64_t c, const std::vector<int>& spatial_dims) {
  std::vector<int64_t> dims = {n, c};
  dims.insert(dims.end(), spatial_dims.begin(), spatial_dims.end());
  return dims;
}

// 2-D and 3-D alike through cuDNN's N-d descriptors. Channels-last
// activations are described by their strides and the filter as NHWC (KRSC),
// the layout of cuDNN's tensor-core kernels, which then need no transposes.
ConvDescriptors describe(const ConvGeometry& g, DType dtype) {
  const MemoryFormat format = g.channels_last ? MemoryFormat::kChannelsLast : MemoryFormat::kContiguous;
  cudnn::TensorDescriptor x =
      cudnn::packed(dtype, with_batch_and_channels(g.n, g.c_in, spatial(g, g.d, g.h, g.w)), format);
  cudnn::TensorDescriptor y =
      cudnn::packed(dtype, with_batch_and_channels(g.n, g.c_out, spatial(g, g.out_d, g.out_h, g.out_w)), format);
  const std::vector<int64_t> filter = with_batch_and_channels(g.c_out, g.c_in / g.groups, spatial(g, g.kd, g.kh, g.kw));
  const std::vector<int> filter_dims(filter.begin(), filter.end());
  cudnn::FilterDescriptor w;
  TS_CUDA_CHECK(cudnnSetFilterNdDescriptor(w.get(), cudnn::data_type(dtype),
                                           g.weight_channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                           static_cast<int>(filter_dims.size()), filter_dims.data()));
  const std::vector<int> pad = spatial(g, g.pad_d, g.pad_h, g.pad_w),
                         stride = spatial(g, g.stride_d, g.stride_h, g.stride_w),
                         dilation = spatial(g, g.dil_d, g.dil_h, g.dil_w);
  cudnn::ConvolutionDescriptor conv;
  TS_CUDA_CHECK(cudnnSetConvolutionNdDescriptor(conv.get(), g.spatial_dims, pad.data(), stride.data(), dilation.data(),
                                                CUDNN_CROSS_CORRELATION,
                                                dtype == DType::kF64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT));
  TS_CUDA_CHECK(cudnnSetConvolutionGroupCount(conv.get(), static_cast<int>(g.groups)));
  TS_CUDA_CHECK(cudnnSetConvolutionMathType(conv.get(), cudnn::math_type(dtype)));
  return ConvDescriptors{std::move(x), std::move(y), std::move(w), std::move(conv)};
}

// Device, direction, dtype, math type, determinism and shape.
using CacheKey = std::tuple<int, Direction, DType, int64_t, bool, ConvShapeKey>;

CacheKey cache_key(int device, Direction direction, DType dtype, const ConvGeometry& g) {
  return {device, direction, dtype, cudnn::math_type(dtype), deterministic_algorithms(), shape_key(g)};
}

// The algorithms of one direction that worked in the search, fastest first.
using Algorithms = std::vector<cudnn::ConvAlgorithm>;

class AlgorithmCache {
 public:
  bool lookup(const CacheKey& key, Algorithms* out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return false;
    *out = it->second;
    return true;
  }
  void insert(const CacheKey& key, Algorithms algorithms) {
    std::lock_guard<std::mutex> lock(mu_);
    cache_.insert_or_assign(key, std::move(algorithms));
  }

 private:
  std::mutex mu_;
  std::map<CacheKey, Algorithms> cache_;
};

AlgorithmCache& algorithm_cache() {
  static AlgorithmCache* cache = new AlgorithmCache;
  return *cache;
}

// Workspace of `bytes`, or nothing when the device has no room for it (the
// caller has a smaller choice); other failures throw.
std::optional<cudnn::Workspace> workspace_if_room(int device, size_t bytes) {
  absl::StatusOr<cudnn::Workspace> ws = cudnn::Workspace::try_allocate(device, bytes);
  if (ws.ok()) return *std::move(ws);
  if (ws.status().code() != absl::StatusCode::kResourceExhausted) throw_if_error(ws.status());
  return std::nullopt;
}

// The largest of `sizes` (largest first) the device has room for; 0 bytes
// when none.
cudnn::Workspace largest_workspace(int device, const std::vector<size_t>& sizes) {
  for (size_t bytes : sizes) {
    if (std::optional<cudnn::Workspace> ws = workspace_if_room(device, bytes)) return *std::move(ws);
  }
  return cudnn::Workspace(device, 0);
}

// Chooses (once per key) and runs one direction. `find` and `run` are the
// cuDNN Find and compute calls of that direction, bound to its tensors.
//
// A full device does not fail a convolution that has a slower way with less
// workspace (PyTorch's search does the same): the search times the
// candidates in the largest workspace the allocator can give, and a call
// runs the fastest algorithm whose workspace it can get, keeping that one
// for later calls. Under deterministic algorithms nothing is timed: the
// heuristic's first deterministic candidate runs (or, on a device too full
// for its workspace, the next one, as PyTorch's does).
template <typename Perf, typename GetFn, typename FindFn, typename RunFn>
void choose_and_run(int device, const CacheKey& key, const ConvDescriptors& d, const char* what, GetFn get, FindFn find,
                    RunFn run) {
  Algorithms algorithms;
  if (!algorithm_cache().lookup(key, &algorithms)) {
    // The descriptor carries the math type of the last algorithm run on it
    // (the other direction's): search under the dtype's own, which lets
    // cuDNN offer its tensor-op candidates.
    TS_CUDA_CHECK(cudnnSetConvolutionMathType(d.conv.get(), static_cast<cudnnMathType_t>(std::get<3>(key))));
    std::vector<Perf> results(16);
    int returned = 0;
    get(static_cast<int>(results.size()), &returned, results.data());
    const bool deterministic = std::get<4>(key);
    if (deterministic) {
      // In the heuristic's order, which is fixed for a GPU, a cuDNN version
      // and a shape. Find's order is by time: two deterministic algorithms
      // that round differently would swap places with timing noise from
      // one run to the next, and the run's bits with them (PyTorch's
      // reproducibility notes ask for benchmark=False for this reason).
      algorithms = cudnn::usable_algorithms(results, returned, cudnn::kMaxConvWorkspace, true, what);
    } else {
      const cudnn::Workspace ws = largest_workspace(device, cudnn::candidate_workspaces(results, returned, false));
      find(static_cast<int>(results.size()), &returned, results.data(), ws.get(), ws.size());
      algorithms = cudnn::usable_algorithms(results, returned, ws.size(), false, what);
    }
    algorithm_cache().insert(key, algorithms);
  }
  absl::Status first_failure;
  for (size_t i = 0; i < algorithms.size(); ++i) {
    std::optional<cudnn::Workspace> ws = workspace_if_room(device, algorithms[i].workspace);
    if (!ws) continue;
    TS_CUDA_CHECK(cudnnSetConvolutionMathType(d.conv.get(), algorithms[i].math));
    const absl::Status ran = run(algorithms[i].algo, ws->get(), ws->size());
    if (ran.ok()) {
      // Kept for later calls (without the ones before it, short of
      // workspace or refused), except under deterministic algorithms,
      // where a moment of a full device must not change the run's bits
      // for good.
      if (i > 0 && !std::get<4>(key)) {
        algorithm_cache().insert(key,
                                 Algorithms(algorithms.begin() + static_cast<std::ptrdiff_t>(i), algorithms.end()));
      }
      return;
    }
    // cuDNN may refuse at run time a candidate its heuristic (never run)
    // or its search offered: as PyTorch's try_all, the next one runs. The
    // launch error it may have left is cleared.
    (void)cudaGetLastError();
    if (first_failure.ok()) first_failure = ran;
  }
  if (!first_failure.ok()) {
    throw_error(first_failure.code(), "convolution: no ", what, " algorithm ran (those with room for their ",
                "workspace failed); the first failure: ", first_failure.message());
  }
  throw_error(absl::StatusCode::kResourceExhausted, "convolution: no ", what,
              " algorithm's workspace fits in the device's free memory (the smallest asks for ",
              algorithms.back().workspace, " bytes); reduce the batch");
}

}  // namespace

ConvLayouts CudaKernels::conv_layouts(MemoryFormat input, DType dtype) const {
  // cuDNN's NHWC convolutions are for f16, bf16 and f32, and want an NHWC
  // filter; PyTorch runs f64 ones in NCHW, as here (only tests and
  // gradchecks run f64).
  if (dtype == DType::kF64) return {};
  return {input, input};
}

void CudaKernels::conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                               const Tensor& out) const {
  const int device = x.device().index;
  // cuDNN runs on the current device, which must be the handle's.
  ts::cuda::DeviceGuard guard(device);
  cudnnHandle_t h = cudnn::handle(device);
  const ConvDescriptors d = describe(g, x.dtype());
  const cudnn::Scaling s(x.dtype());
  choose_and_run<cudnnConvolutionFwdAlgoPerf_t>(
      device, cache_key(device, Direction::kForward, x.dtype(), g), d, "forward",
      [&](int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* r) {
        TS_CUDA_CHECK(
            cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), n, returned, r));
      },
      [&](int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* r, void* ws, size_t bytes) {
        TS_CUDA_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x.get(), x.raw_data(), d.w.get(), weight.raw_data(),
                                                             d.conv.get(), d.y.get(), out.raw_data(), n, returned, r,
                                                             ws, bytes));
      },
      [&](int algo, void* ws, size_t bytes) -> absl::Status {
        RETURN_IF_CUDA_ERROR(cudnnConvolutionForward(h, s.one(), d.x.get(), x.raw_data(), d.w.get(), weight.raw_data(),
                                                     d.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws,
                                                     bytes, s.zero(), d.y.get(), out.raw_data()));
        return absl::OkStatus();
      });
  if (!bias.defined()) return;
  // Through our broadcasting add, not cuDNN's deprecated cudnnAddTensor,
  // whose dtypes (bf16 among them) and 5-D support nothing documents.
  Shape bias_shape(out.dim(), 1);
  bias_shape[1] = g.c_out;
  copy_(out, out + reshape(bias, bias_shape));
}

void CudaKernels::conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                                const Tensor& grad_x, const Tensor& grad_weight) const {
  const int device = x.device().index;
  // cuDNN runs on the current device, which must be the handle's.
  ts::cuda::DeviceGuard guard(device);
  cudnnHandle_t h = cudnn::handle(device);
  const ConvDescriptors d = describe(g, x.dtype());
  const cudnn::Scaling s(x.dtype());
  if (grad_x.defined()) {
    choose_and_run<cudnnConvolutionBwdDataAlgoPerf_t>(
        device, cache_key(device, Direction::kBackwardData, x.dtype(), g), d, "backward-data",
        [&](int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* r) {
          TS_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), n,
                                                                    returned, r));
        },
        [&](int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* r, void* ws, size_t bytes) {
          TS_CUDA_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w.get(), weight.raw_data(), d.y.get(),
                                                                    grad_out.raw_data(), d.conv.get(), d.x.get(),
                                                                    grad_x.raw_data(), n, returned, r, ws, bytes));
        },
        [&](int algo, void* ws, size_t bytes) -> absl::Status {
          RETURN_IF_CUDA_ERROR(cudnnConvolutionBackwardData(
              h, s.one(), d.w.get(), weight.raw_data(), d.y.get(), grad_out.raw_data(), d.conv.get(),
              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, bytes, s.zero(), d.x.get(), grad_x.raw_data()));
          return absl::OkStatus();
        });
  }
  if (grad_weight.defined()) {
    choose_and_run<cudnnConvolutionBwdFilterAlgoPerf_t>(
        device, cache_key(device, Direction::kBackwardFilter, x.dtype(), g), d, "backward-filter",
        [&](int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* r) {
          TS_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                                      n, returned, r));
        },
        [&](int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* r, void* ws, size_t bytes) {
          TS_CUDA_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
              h, d.x.get(), x.raw_data(), d.y.get(), grad_out.raw_data(), d.conv.get(), d.w.get(),
              grad_weight.raw_data(), n, returned, r, ws, bytes));
        },
        [&](int algo, void* ws, size_t bytes) -> absl::Status {
          RETURN_IF_CUDA_ERROR(cudnnConvolutionBackwardFilter(h, s.one(), d.x.get(), x.raw_data(), d.y.get(),
                                                              grad_out.raw_data(), d.conv.get(),
                                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws,
                                                              bytes, s.zero(), d.w.get(), grad_weight.raw_data()));
          return absl::OkStatus();
        });
  }
}

}  // namespace ts::nn::functional
