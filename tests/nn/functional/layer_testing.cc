#include "tests/nn/functional/layer_testing.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/tensor/testing.h"

namespace ts::nn::testing {

std::vector<Tensor> forward_backward(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out,
                                     Device device, MemoryFormat format) {
  std::vector<autograd::Variable> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const Tensor laid_out = i == 0 ? contiguous(t, format) : t;
    vars.push_back(t.defined() ? autograd::Variable(to(laid_out, device), true) : autograd::Variable());
  }
  const autograd::Variable out = fn(vars);
  out.backward(to(contiguous(to(grad_out, out.dtype()), format), device));
  std::vector<Tensor> results = {to(out.data(), Device::cpu())};
  for (const autograd::Variable& v : vars) {
    results.push_back(v.defined() && v.grad().defined() ? to(v.grad(), Device::cpu()) : Tensor());
  }
  return results;
}

void expect_matches_f64(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out, DType dtype,
                        Device device, double tol, MemoryFormat format) {
  std::vector<Tensor> in64, in_dtype;
  for (const Tensor& t : inputs) {
    in64.push_back(t.defined() ? to(t, DType::kF64) : Tensor());
    in_dtype.push_back(t.defined() ? to(t, dtype) : Tensor());
  }
  // The output gradient is an input too: the reference takes it as the run
  // in `dtype` receives it, rounded to that dtype.
  const Tensor grad_out_as_received = to(to(grad_out, dtype), DType::kF64);
  const std::vector<Tensor> want = forward_backward(fn, in64, grad_out_as_received, Device::cpu());
  const std::vector<Tensor> got = forward_backward(fn, in_dtype, grad_out_as_received, device, format);
  ASSERT_EQ(want.size(), got.size());
  for (const size_t i : {size_t{0}, size_t{1}}) {
    // Dense in the layout and saying so (a size-1 channel or spatial extent
    // makes a tensor dense in both).
    EXPECT_TRUE(!got[i].defined() || (got[i].is_contiguous(format) && got[i].suggest_memory_format() == format))
        << (i == 0 ? "the output" : "the first input's gradient") << " is not " << memory_format_name(format);
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string what = i == 0 ? "output" : "gradient of input " + std::to_string(i - 1);
    ASSERT_EQ(want[i].defined(), got[i].defined()) << what;
    if (!want[i].defined()) continue;
    const ts::testing::Ref ref = ts::testing::ref_of(want[i]);
    double scale = 0;
    for (double v : ref.v) scale = std::max(scale, std::abs(v));
    ts::testing::expect_close(got[i], ref, tol, std::max(scale, 1e-6), what);
  }
}

void expect_cuda_matches_cpu(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out, DType dtype,
                             double tol, MemoryFormat format) {
  expect_matches_f64(fn, inputs, grad_out, dtype, Device::cuda(0), tol, format);
}

}  // namespace ts::nn::testing
