// conv2d and conv3d: validation, output geometry, and the backward record.
// The kernels (kernels.h) do the arithmetic; the bias gradient is a plain
// sum.
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/function.h"
#include "base/error.h"
#include "nn/functional.h"
#include "nn/functional/common.h"
#include "nn/functional/kernels.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

// "conv2d" or "conv3d".
template <int N>
std::string op_name() {
  return absl::StrCat("conv", N, "d");
}

template <int N>
ConvGeometry conv_geometry(const Tensor& x, const Tensor& w, const Tensor& b, const ConvOptions<N>& o) {
  const std::string op = op_name<N>();
  check_floating(op, x);
  check_floating(op, w);
  const char* spatial = N == 2 ? "H, W" : "D, H, W";
  const char* kernel = N == 2 ? "kH, kW" : "kD, kH, kW";
  TS_CHECK(x.dim() == N + 2, op, ": input must be ", N + 2, "-D [N, C_in, ", spatial, "], got ", x.describe());
  TS_CHECK(w.dim() == N + 2, op, ": weight must be ", N + 2, "-D [C_out, C_in / groups, ", kernel, "], got ",
           w.describe());
  const std::string shapes = absl::StrCat(" (input ", x.describe(), ", weight ", w.describe(), ")");
  TS_CHECK(x.dtype() == w.dtype(), op, ": input and weight dtypes differ", shapes);
  check_same_device(op, {&x, &w});
  for (int i = 0; i < N; ++i) {
    TS_CHECK(o.stride[i] >= 1 && o.dilation[i] >= 1 && o.padding[i] >= 0, op, ": stride [",
             absl::StrJoin(o.stride, ", "), "] and dilation [", absl::StrJoin(o.dilation, ", "),
             "] must be positive and padding [", absl::StrJoin(o.padding, ", "), "] non-negative");
  }
  const int64_t groups = o.groups;
  TS_CHECK(groups >= 1 && x.size(1) % groups == 0 && w.size(0) % groups == 0, op, ": groups ", groups,
           " must divide both input channels ", x.size(1), " and output channels ", w.size(0), shapes);
  TS_CHECK(w.size(1) * groups == x.size(1), op, ": input has ", x.size(1), " channels but weight expects ", w.size(1),
           " x ", groups, " groups = ", w.size(1) * groups, shapes);
  bool empty = x.size(0) < 1 || x.size(1) < 1 || w.size(0) < 1;
  for (int i = 0; i < N; ++i) empty = empty || w.size(2 + i) < 1;
  TS_CHECK(!empty, op, ": empty input or weight", shapes);
  if (b.defined()) {
    check_floating(op, b);
    TS_CHECK(b.dim() == 1 && b.size(0) == w.size(0) && b.dtype() == x.dtype(), op, ": bias ", b.describe(), " must be ",
             dtype_name(x.dtype()), "[", w.size(0), "]", shapes);
    check_same_device(op, {&x, &b});
  }
  // Each spatial dim: input, kernel, stride, padding, dilation -> output.
  std::array<int64_t, N> span, padded, out;
  for (int i = 0; i < N; ++i) {
    span[i] = o.dilation[i] * (w.size(2 + i) - 1) + 1;
    padded[i] = x.size(2 + i) + 2 * o.padding[i];
  }
  bool fits = true;
  for (int i = 0; i < N; ++i) fits = fits && span[i] <= padded[i];
  TS_CHECK(fits, op, ": kernel ", absl::StrJoin(span, "x"), " (with dilation) is larger than the padded input ",
           absl::StrJoin(padded, "x"), shapes);
  for (int i = 0; i < N; ++i) out[i] = (padded[i] - span[i]) / o.stride[i] + 1;

  ConvGeometry g;
  g.spatial_dims = N;
  g.n = x.size(0), g.c_in = x.size(1), g.c_out = w.size(0), g.groups = groups;
  // The last two dims are height and width; a third before them is depth.
  constexpr int h = N - 2, wd = N - 1;
  g.h = x.size(2 + h), g.w = x.size(2 + wd), g.kh = w.size(2 + h), g.kw = w.size(2 + wd);
  g.out_h = out[h], g.out_w = out[wd];
  g.stride_h = o.stride[h], g.stride_w = o.stride[wd], g.pad_h = o.padding[h], g.pad_w = o.padding[wd];
  g.dil_h = o.dilation[h], g.dil_w = o.dilation[wd];
  if constexpr (N == 3) {
    g.d = x.size(2), g.kd = w.size(2), g.out_d = out[0];
    g.stride_d = o.stride[0], g.pad_d = o.padding[0], g.dil_d = o.dilation[0];
  }
  return g;
}

template <int N>
autograd::Variable conv(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                        const ConvOptions<N>& options) {
  TS_CHECK(x.defined() && weight.defined(), op_name<N>(), ": input and weight must be defined");
  const Tensor b = bias.defined() ? bias.data() : Tensor();
  ConvGeometry g = conv_geometry<N>(x.data(), weight.data(), b, options);
  // A channels-last input gives a channels-last output, and the gradients
  // come back in the input's and the weight's own layouts, whatever layouts
  // the device's kernels compute in (conv_layouts): parameters, optimizers
  // and checkpoints never see the difference.
  const LayerKernels* kernels = &kernels_for(x.device());
  const MemoryFormat format = x.data().suggest_memory_format();
  const MemoryFormat weight_format = weight.data().suggest_memory_format();
  const DType dtype = x.dtype(), ct = compute_dtype(x.data());
  const ConvLayouts layouts = kernels->conv_layouts(format, ct);
  g.channels_last = layouts.activations == MemoryFormat::kChannelsLast;
  g.weight_channels_last = layouts.weight == MemoryFormat::kChannelsLast;
  const Tensor xc = as_dense(x.data(), ct, layouts.activations);
  const Tensor wc = as_dense(weight.data(), ct, layouts.weight);
  const Tensor bc = b.defined() ? as_dense(b, ct) : Tensor();
  Shape out_shape = {g.n, g.c_out, g.out_h, g.out_w};
  if (N == 3) out_shape.insert(out_shape.begin() + 2, g.out_d);
  const Tensor out = Tensor::allocate(out_shape, ct, x.device(), layouts.activations);
  kernels->conv_forward(g, xc, wc, bc, out);
  // The bias gradient sums over the batch and every spatial dim.
  std::vector<int64_t> bias_dims(N + 1);
  std::iota(bias_dims.begin() + 1, bias_dims.end(), 2);
  return autograd::record(
      op_name<N>(), {x, weight, bias}, as_dense(out, dtype, format),
      [g, xc, wc, layouts, format, weight_format, dtype, ct, kernels, bias_dims](const autograd::GradContext& ctx) {
        const Tensor gy = as_dense(ctx.grad(), ct, layouts.activations);
        const Tensor gx = ctx.needs(0) ? Tensor::allocate(xc.shape(), ct, xc.device(), layouts.activations) : Tensor();
        const Tensor gw = ctx.needs(1) ? Tensor::allocate(wc.shape(), ct, wc.device(), layouts.weight) : Tensor();
        if (gx.defined() || gw.defined()) kernels->conv_backward(g, xc, wc, gy, gx, gw);
        return std::vector<Tensor>{gx.defined() ? as_dense(gx, dtype, format) : Tensor(),
                                   gw.defined() ? as_dense(gw, dtype, weight_format) : Tensor(),
                                   ctx.needs(2) ? ts::to(ts::sum(gy, bias_dims), dtype) : Tensor()};
      });
}

}  // namespace

autograd::Variable conv2d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv2dOptions& options) {
  return conv<2>(x, weight, bias, options);
}

autograd::Variable conv3d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv3dOptions& options) {
  return conv<3>(x, weight, bias, options);
}

}  // namespace ts::nn::functional
