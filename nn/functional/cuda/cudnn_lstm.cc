#include "nn/functional/cuda/cudnn_lstm.h"

#include <cudnn.h>

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "nn/functional/cuda/cudnn_utils.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

using DropoutDescriptor =
    cudnn::Descriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;
using RnnDescriptor = cudnn::Descriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor =
    cudnn::Descriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;

int32_t to_int(int64_t v) { return cudnn::checked_int(v, "an LSTM size"); }

// The RNN descriptor of one layer: cuDNN's LSTM cell (gates i, f, g, o and
// both biases, as PyTorch's), no projection, and a dropout descriptor of
// probability 0, since cuDNN's dropout acts between the layers of one
// descriptor and each of ours holds one layer.
class LayerDescriptor {
 public:
  LayerDescriptor(const CudnnLstmShape& shape, cudnnHandle_t handle) {
    TS_CHECK(cudnn_lstm_supports(shape.dtype), "lstm on cuDNN: ", dtype_name(shape.dtype),
             " is not supported (f16, f32, f64)");
    // With probability 0 cuDNN draws nothing, so it needs no state memory.
    TS_CUDA_CHECK(cudnnSetDropoutDescriptor(dropout_.get(), handle, 0.0F, nullptr, 0, 0));
    const cudnnDataType_t type = cudnn::data_type(shape.dtype);
    // f16 data on tensor cores, its sums in f32.
    const cudnnDataType_t math = shape.dtype == DType::kF16 ? CUDNN_DATA_FLOAT : type;
    TS_CUDA_CHECK(cudnnSetRNNDescriptor_v8(
        rnn_.get(), CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, shape.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
        shape.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, type, math,
        cudnn::math_type(shape.dtype), to_int(shape.input_size), to_int(shape.hidden_size), to_int(shape.hidden_size),
        /*numLayers=*/1, dropout_.get(), CUDNN_RNN_PADDED_IO_ENABLED));
  }
  cudnnRNNDescriptor_t get() const { return rnn_.get(); }

 private:
  DropoutDescriptor dropout_;
  RnnDescriptor rnn_;
};

// Time-major padded sequences [T, B, width] with each one's length; cuDNN
// writes 0 past a sequence's length in outputs (read in the data's type: a
// zero of any width is all zero bits).
RnnDataDescriptor sequence_data(DType dtype, int64_t steps, int64_t batch, int64_t width,
                                const std::vector<int32_t>& lengths) {
  RnnDataDescriptor d;
  cudnn::Scaling fill(dtype);
  TS_CUDA_CHECK(cudnnSetRNNDataDescriptor(d.get(), cudnn::data_type(dtype), CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                          to_int(steps), to_int(batch), to_int(width), lengths.data(),
                                          const_cast<void*>(fill.zero())));
  return d;
}

size_t weight_space_bytes(cudnnHandle_t handle, const LayerDescriptor& desc) {
  size_t bytes = 0;
  TS_CUDA_CHECK(cudnnGetRNNWeightSpaceSize(handle, desc.get(), &bytes));
  return bytes;
}

// Everything one call needs: descriptors of the layer, of x and y, of the
// states, and the workspace and reserve sizes for this batch and length.
struct Call {
  Call(const CudnnLstmShape& shape, int64_t steps, int64_t batch, const std::vector<int32_t>& lengths,
       cudnnForwardMode_t mode)
      : handle(cudnn::handle(shape.device)),
        desc(shape, handle),
        x(sequence_data(shape.dtype, steps, batch, shape.input_size, lengths)),
        y(sequence_data(shape.dtype, steps, batch, shape.directions() * shape.hidden_size, lengths)),
        state(cudnn::packed(shape.dtype, {shape.directions(), batch, shape.hidden_size})),
        weight_bytes(weight_space_bytes(handle, desc)) {
    TS_CUDA_CHECK(cudnnGetRNNTempSpaceSizes(handle, desc.get(), mode, x.get(), &work_bytes, &reserve_bytes));
  }

  cudnnHandle_t handle;
  LayerDescriptor desc;
  RnnDataDescriptor x, y;
  cudnn::TensorDescriptor state;
  size_t weight_bytes;
  size_t work_bytes = 0, reserve_bytes = 0;
};

void check_weight_space(const Call& call, const CudnnLstmShape& shape, const Tensor& weight_space) {
  TS_CHECK(weight_space.dtype() == shape.dtype && weight_space.is_contiguous() &&
               static_cast<size_t>(weight_space.numel() * dtype_size(shape.dtype)) == call.weight_bytes,
           "lstm on cuDNN: the weight space must be contiguous ", dtype_name(shape.dtype), "[",
           call.weight_bytes / dtype_size(shape.dtype), "], got ", weight_space.describe());
}

}  // namespace

bool cudnn_lstm_supports(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16; }

CudnnLstmLayout cudnn_lstm_layout(const CudnnLstmShape& shape) {
  ts::cuda::DeviceGuard guard(shape.device);  // cuDNN runs on the current device, which must be the handle's
  const cudnnHandle_t handle = cudnn::handle(shape.device);
  const LayerDescriptor desc(shape, handle);
  const size_t bytes = weight_space_bytes(handle, desc);
  const int64_t element = dtype_size(shape.dtype), hidden = shape.hidden_size;
  // cuDNN computes each parameter's address from the base it is given; the
  // offsets from that base are what every weight space of this shape shares.
  const cudnn::Workspace space(shape.device, bytes);
  const char* base = static_cast<const char*>(space.get());
  const auto offset_of = [&](const void* address) { return (static_cast<const char*>(address) - base) / element; };
  cudnn::TensorDescriptor matrix_desc, bias_desc;

  CudnnLstmLayout layout;
  layout.numel = static_cast<int64_t>(bytes) / element;
  for (int pseudo_layer = 0; pseudo_layer < shape.directions(); ++pseudo_layer) {
    // The matrix and bias offsets of linear layers first..first+3 (one
    // per gate), checked to be adjacent, so that they form one [4H, cols]
    // matrix and one [4H] bias.
    const auto gates = [&](int first, int64_t cols, const char* what) {
      std::pair<int64_t, int64_t> start{-1, -1};
      for (int gate = 0; gate < 4; ++gate) {
        void* matrix = nullptr;
        void* bias = nullptr;
        TS_CUDA_CHECK(cudnnGetRNNWeightParams(handle, desc.get(), pseudo_layer, bytes, space.get(), first + gate,
                                              matrix_desc.get(), &matrix, bias_desc.get(), &bias));
        const int64_t m = offset_of(matrix), b = shape.bias ? offset_of(bias) : -1;
        if (gate == 0) start = {m, b};
        TS_CHECK(m == start.first + gate * hidden * cols && (!shape.bias || b == start.second + gate * hidden),
                 "lstm on cuDNN: cuDNN's weight space does not hold gate ", gate, " of ", what, " (direction ",
                 pseudo_layer, ") next to the gate before it, so PyTorch-layout parameters cannot be views of it");
      }
      return start;
    };
    const auto [weight_ih, bias_ih] = gates(0, shape.input_size, "weight_ih");
    const auto [weight_hh, bias_hh] = gates(4, hidden, "weight_hh");
    layout.directions.push_back({weight_ih, weight_hh, bias_ih, bias_hh});
  }
  return layout;
}

CudnnLstmForward cudnn_lstm_forward(const CudnnLstmShape& shape, const Tensor& x, const Tensor& h0, const Tensor& c0,
                                    const Tensor& weight_space, std::vector<int32_t> lengths, bool training) {
  ts::cuda::DeviceGuard guard(shape.device);  // cuDNN runs on the current device, which must be the handle's
  const int64_t steps = x.size(0), batch = x.size(1);
  if (lengths.empty()) lengths.assign(batch, to_int(steps));
  // cuDNN reads `batch` lengths and x's width from the descriptors it is given.
  TS_CHECK(x.dim() == 3 && x.size(2) == shape.input_size && static_cast<int64_t>(lengths.size()) == batch &&
               std::all_of(lengths.begin(), lengths.end(), [&](int32_t n) { return n >= 1 && n <= steps; }),
           "lstm on cuDNN: input ", x.describe(), " and ", lengths.size(), " lengths do not fit [T, B, ",
           shape.input_size, "] with B lengths in [1, T]");
  const cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
  const Call call(shape, steps, batch, lengths, mode);
  check_weight_space(call, shape, weight_space);
  const TensorOptions like{shape.dtype, x.device()};
  CudnnLstmForward out;
  out.output = empty({steps, batch, shape.directions() * shape.hidden_size}, like);
  out.h = empty({shape.directions(), batch, shape.hidden_size}, like);
  out.c = empty({shape.directions(), batch, shape.hidden_size}, like);
  // Read by cuDNN's kernels, so on the device; freed in stream order.
  out.device_lengths = to(from_vector<int32_t>(lengths, {batch}), x.device());
  out.lengths = std::move(lengths);
  const cudnn::Workspace work(shape.device, call.work_bytes);
  if (training) out.reserve = empty({static_cast<int64_t>(call.reserve_bytes)}, {DType::kU8, x.device()});
  TS_CUDA_CHECK(cudnnRNNForward(call.handle, call.desc.get(), mode, out.device_lengths.data<int32_t>(), call.x.get(),
                                x.raw_data(), call.y.get(), out.output.raw_data(), call.state.get(), h0.raw_data(),
                                out.h.raw_data(), call.state.get(), c0.raw_data(), out.c.raw_data(), call.weight_bytes,
                                weight_space.raw_data(), call.work_bytes, work.get(), training ? call.reserve_bytes : 0,
                                training ? out.reserve.raw_data() : nullptr));
  return out;
}

CudnnLstmGradients cudnn_lstm_backward(const CudnnLstmShape& shape, const Tensor& x, const Tensor& h0, const Tensor& c0,
                                       const Tensor& weight_space, const CudnnLstmForward& forward,
                                       const Tensor& grad_output, const Tensor& grad_h, const Tensor& grad_c,
                                       bool weight_gradient) {
  ts::cuda::DeviceGuard guard(shape.device);  // cuDNN runs on the current device, which must be the handle's
  TS_CHECK(forward.reserve.defined(), "lstm on cuDNN: backward of a forward that did not run in training mode");
  const int64_t steps = x.size(0), batch = x.size(1);
  const Call call(shape, steps, batch, forward.lengths, CUDNN_FWD_MODE_TRAINING);
  const TensorOptions like{shape.dtype, x.device()};
  CudnnLstmGradients g;
  // cuDNN's documentation promises the padding fill for outputs of the
  // forward; whether dx past a sequence's length is written, it does not
  // say, and nothing else would zero it.
  const bool padded = std::any_of(forward.lengths.begin(), forward.lengths.end(), [&](int32_t n) { return n < steps; });
  g.x = padded ? zeros(x.shape(), like) : empty(x.shape(), like);
  g.h0 = empty(h0.shape(), like);
  g.c0 = empty(c0.shape(), like);
  // cuDNN reads a null dhy or dcy as zeros; dy it always reads.
  const Tensor dy = grad_output.defined() ? grad_output : zeros(forward.output.shape(), like);
  const cudnn::Workspace work(shape.device, call.work_bytes);
  TS_CUDA_CHECK(cudnnRNNBackwardData_v8(
      call.handle, call.desc.get(), forward.device_lengths.data<int32_t>(), call.y.get(), forward.output.raw_data(),
      dy.raw_data(), call.x.get(), g.x.raw_data(), call.state.get(), h0.raw_data(),
      grad_h.defined() ? grad_h.raw_data() : nullptr, g.h0.raw_data(), call.state.get(), c0.raw_data(),
      grad_c.defined() ? grad_c.raw_data() : nullptr, g.c0.raw_data(), call.weight_bytes, weight_space.raw_data(),
      call.work_bytes, work.get(), call.reserve_bytes, forward.reserve.raw_data()));
  if (weight_gradient) {
    // Must follow the data gradient, whose pass leaves in the reserve space
    // what this one reads.
    g.weight_space = zeros(weight_space.shape(), like);
    TS_CUDA_CHECK(cudnnRNNBackwardWeights_v8(
        call.handle, call.desc.get(), CUDNN_WGRAD_MODE_ADD, forward.device_lengths.data<int32_t>(), call.x.get(),
        x.raw_data(), call.state.get(), h0.raw_data(), call.y.get(), forward.output.raw_data(), call.weight_bytes,
        g.weight_space.raw_data(), call.work_bytes, work.get(), call.reserve_bytes, forward.reserve.raw_data()));
  }
  return g;
}

}  // namespace ts::nn::functional
