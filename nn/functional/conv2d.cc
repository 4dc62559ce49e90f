// conv2d: validation, output geometry, and the backward record. The kernels
// (kernels.h) do the arithmetic; the bias gradient is a plain sum.
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

Conv2dGeometry conv_geometry(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dOptions& o) {
  check_floating("conv2d", x);
  check_floating("conv2d", w);
  TS_CHECK(x.dim() == 4, "conv2d: input must be 4-D [N, C_in, H, W], got ", x.describe());
  TS_CHECK(w.dim() == 4, "conv2d: weight must be 4-D [C_out, C_in / groups, kH, kW], got ", w.describe());
  const std::string shapes = absl::StrCat(" (input ", x.describe(), ", weight ", w.describe(), ")");
  TS_CHECK(x.dtype() == w.dtype(), "conv2d: input and weight dtypes differ", shapes);
  check_same_device("conv2d", {&x, &w});
  for (int i = 0; i < 2; ++i) {
    TS_CHECK(o.stride[i] >= 1 && o.dilation[i] >= 1 && o.padding[i] >= 0, "conv2d: stride [", o.stride[0], ", ",
             o.stride[1], "] and dilation [", o.dilation[0], ", ", o.dilation[1], "] must be positive and padding [",
             o.padding[0], ", ", o.padding[1], "] non-negative");
  }
  const int64_t groups = o.groups;
  TS_CHECK(groups >= 1 && x.size(1) % groups == 0 && w.size(0) % groups == 0, "conv2d: groups ", groups,
           " must divide both input channels ", x.size(1), " and output channels ", w.size(0), shapes);
  TS_CHECK(w.size(1) * groups == x.size(1), "conv2d: input has ", x.size(1), " channels but weight expects ", w.size(1),
           " x ", groups, " groups = ", w.size(1) * groups, shapes);
  TS_CHECK(x.size(0) >= 1 && x.size(1) >= 1 && w.size(0) >= 1 && w.size(2) >= 1 && w.size(3) >= 1,
           "conv2d: empty input or weight", shapes);
  if (b.defined()) {
    check_floating("conv2d", b);
    TS_CHECK(b.dim() == 1 && b.size(0) == w.size(0) && b.dtype() == x.dtype(), "conv2d: bias ", b.describe(),
             " must be ", dtype_name(x.dtype()), "[", w.size(0), "]", shapes);
    check_same_device("conv2d", {&x, &b});
  }
  Conv2dGeometry g;
  g.n = x.size(0), g.c_in = x.size(1), g.h = x.size(2), g.w = x.size(3);
  g.c_out = w.size(0), g.kh = w.size(2), g.kw = w.size(3);
  g.stride_h = o.stride[0], g.stride_w = o.stride[1];
  g.pad_h = o.padding[0], g.pad_w = o.padding[1];
  g.dil_h = o.dilation[0], g.dil_w = o.dilation[1];
  g.groups = groups;
  const int64_t span_h = g.dil_h * (g.kh - 1) + 1, span_w = g.dil_w * (g.kw - 1) + 1;
  const int64_t padded_h = g.h + 2 * g.pad_h, padded_w = g.w + 2 * g.pad_w;
  TS_CHECK(span_h <= padded_h && span_w <= padded_w, "conv2d: kernel ", span_h, "x", span_w,
           " (with dilation) is larger than the padded input ", padded_h, "x", padded_w, shapes);
  g.out_h = (padded_h - span_h) / g.stride_h + 1;
  g.out_w = (padded_w - span_w) / g.stride_w + 1;
  return g;
}

}  // namespace

autograd::Variable conv2d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv2dOptions& options) {
  TS_CHECK(x.defined() && weight.defined(), "conv2d: input and weight must be defined");
  const Tensor b = bias.defined() ? bias.data() : Tensor();
  const Conv2dGeometry g = conv_geometry(x.data(), weight.data(), b, options);
  const DType dtype = x.dtype(), ct = compute_dtype(x.data());
  const Tensor xc = as_dense(x.data(), ct);
  const Tensor wc = as_dense(weight.data(), ct);
  const Tensor bc = b.defined() ? as_dense(b, ct) : Tensor();
  const Tensor out = Tensor::allocate({g.n, g.c_out, g.out_h, g.out_w}, ct, x.device());
  const LayerKernels* kernels = &kernels_for(x.device());
  kernels->conv2d_forward(g, xc, wc, bc, out);
  return autograd::record("conv2d", {x, weight, bias}, ts::to(out, dtype),
                          [g, xc, wc, dtype, ct, kernels](const autograd::GradContext& ctx) {
                            const Tensor gy = as_dense(ctx.grad(), ct);
                            const Tensor gx = ctx.needs(0) ? Tensor::allocate(xc.shape(), ct, xc.device()) : Tensor();
                            const Tensor gw = ctx.needs(1) ? Tensor::allocate(wc.shape(), ct, wc.device()) : Tensor();
                            if (gx.defined() || gw.defined()) kernels->conv2d_backward(g, xc, wc, gy, gx, gw);
                            std::vector<Tensor> grads = {gx, gw, ctx.needs(2) ? ts::sum(gy, {0, 2, 3}) : Tensor()};
                            for (Tensor& grad : grads) {
                              if (grad.defined()) grad = ts::to(grad, dtype);
                            }
                            return grads;
                          });
}

}  // namespace ts::nn::functional
