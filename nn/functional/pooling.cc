// max_pool2d, avg_pool2d and adaptive_avg_pool2d: validation, output sizes
// (PyTorch's rules, ceil_mode included) and the backward records.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "base/error.h"
#include "nn/functional.h"
#include "nn/functional/common.h"
#include "nn/functional/kernels.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

void check_input(absl::string_view op, const autograd::Variable& x) {
  TS_CHECK(x.defined(), op, ": input is undefined");
  check_floating(op, x.data());
  TS_CHECK(x.dim() == 3 || x.dim() == 4, op, ": input must be [N, C, H, W] or [C, H, W], got ", x.data().describe());
  TS_CHECK(x.numel() != 0, op, ": empty input ", x.data().describe());
}

// Output length of one dim, as PyTorch's pooling_output_shape: the division
// rounds down (a window larger than the padded input gives 0 windows, not
// 1), and with ceil_mode the last window must still start inside the input
// or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const int64_t span = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
  int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Pool2dGeometry pool_geometry(absl::string_view op, const autograd::Variable& x, const Pool2dOptions& o) {
  check_input(op, x);
  const int64_t h = x.size(-2), w = x.size(-1);
  const std::array<int64_t, 2> stride = o.stride == std::array<int64_t, 2>{0, 0} ? o.kernel : o.stride;
  const std::string config = absl::StrCat("kernel [", o.kernel[0], ", ", o.kernel[1], "], stride [", stride[0], ", ",
                                          stride[1], "], padding [", o.padding[0], ", ", o.padding[1], "]");
  for (int i = 0; i < 2; ++i) {
    TS_CHECK(o.kernel[i] >= 1 && stride[i] >= 1 && o.padding[i] >= 0 && 2 * o.padding[i] <= o.kernel[i], op, ": ",
             config, ": kernel and stride must be positive, padding at most half the kernel");
  }
  Pool2dGeometry g;
  g.planes = x.numel() / (h * w), g.channels = x.size(-3), g.h = h, g.w = w;
  g.kh = o.kernel[0], g.kw = o.kernel[1];
  g.stride_h = stride[0], g.stride_w = stride[1];
  g.pad_h = o.padding[0], g.pad_w = o.padding[1];
  g.count_include_pad = o.count_include_pad;
  g.adaptive = false;
  g.out_h = pooled_size(h, g.kh, g.stride_h, g.pad_h, o.ceil_mode);
  g.out_w = pooled_size(w, g.kw, g.stride_w, g.pad_w, o.ceil_mode);
  TS_CHECK(g.out_h >= 1 && g.out_w >= 1, op, ": ", config, " is larger than the padded input ", x.data().describe());
  return g;
}

Shape output_shape(const Tensor& x, const Pool2dGeometry& g) {
  Shape shape = x.shape();
  shape[shape.size() - 2] = g.out_h;
  shape[shape.size() - 1] = g.out_w;
  return shape;
}

// The layout the pooling of x runs in: x's, so channels-last stays so.
MemoryFormat pool_format(const autograd::Variable& x, Pool2dGeometry* g) {
  const MemoryFormat format = x.data().suggest_memory_format();
  g->channels_last = format == MemoryFormat::kChannelsLast;
  return format;
}

// Average pooling of either kind, once the geometry is known.
autograd::Variable average(const char* op, const autograd::Variable& x, Pool2dGeometry g) {
  const MemoryFormat format = pool_format(x, &g);
  const DType dtype = x.dtype(), ct = compute_dtype(x.data());
  const Tensor xc = as_dense(x.data(), ct, format);
  const Tensor out = Tensor::allocate(output_shape(xc, g), ct, xc.device(), format);
  const LayerKernels* kernels = &kernels_for(xc.device());
  kernels->avg_pool2d_forward(g, xc, out);
  const Shape in_shape = xc.shape();
  const Device device = xc.device();
  return autograd::record(op, {x}, ts::to(out, dtype),
                          [g, in_shape, device, format, dtype, ct, kernels](const autograd::GradContext& ctx) {
                            const Tensor gx = Tensor::allocate(in_shape, ct, device, format);
                            kernels->avg_pool2d_backward(g, as_dense(ctx.grad(), ct, format), gx);
                            return std::vector<Tensor>{ts::to(gx, dtype)};
                          });
}

}  // namespace

autograd::Variable max_pool2d(const autograd::Variable& x, const Pool2dOptions& options) {
  Pool2dGeometry g = pool_geometry("max_pool2d", x, options);
  const MemoryFormat format = pool_format(x, &g);
  const DType dtype = x.dtype(), ct = compute_dtype(x.data());
  const Tensor xc = as_dense(x.data(), ct, format);
  const Shape out_shape = output_shape(xc, g);
  const Tensor out = Tensor::allocate(out_shape, ct, xc.device(), format);
  const Tensor indices = Tensor::allocate(out_shape, DType::kI32, xc.device(), format);
  const LayerKernels* kernels = &kernels_for(xc.device());
  kernels->max_pool2d_forward(g, xc, out, indices);
  const Shape in_shape = xc.shape();
  return autograd::record("max_pool2d", {x}, ts::to(out, dtype),
                          [g, indices, in_shape, format, dtype, ct, kernels](const autograd::GradContext& ctx) {
                            const Tensor gx = Tensor::allocate(in_shape, ct, indices.device(), format);
                            kernels->max_pool2d_backward(g, as_dense(ctx.grad(), ct, format), indices, gx);
                            return std::vector<Tensor>{ts::to(gx, dtype)};
                          });
}

autograd::Variable avg_pool2d(const autograd::Variable& x, const Pool2dOptions& options) {
  return average("avg_pool2d", x, pool_geometry("avg_pool2d", x, options));
}

autograd::Variable adaptive_avg_pool2d(const autograd::Variable& x, std::array<int64_t, 2> output_size) {
  check_input("adaptive_avg_pool2d", x);
  TS_CHECK(output_size[0] >= 1 && output_size[1] >= 1, "adaptive_avg_pool2d: output size [", output_size[0], ", ",
           output_size[1], "] must be positive (input ", x.data().describe(), ")");
  Pool2dGeometry g{};
  g.h = x.size(-2), g.w = x.size(-1);
  g.planes = x.numel() / (g.h * g.w), g.channels = x.size(-3);
  g.out_h = output_size[0], g.out_w = output_size[1];
  g.adaptive = true;
  return average("adaptive_avg_pool2d", x, g);
}

}  // namespace ts::nn::functional
