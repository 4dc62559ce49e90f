#include "autograd/function.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "autograd/grad_mode.h"

namespace ts::autograd {

bool any_requires_grad(absl::Span<const Variable> inputs) {
  if (!grad_enabled()) return false;
  for (const Variable& v : inputs) {
    if (v.defined() && v.requires_grad()) return true;
  }
  return false;
}

std::vector<Variable> record(std::string name, absl::Span<const Variable> inputs, std::vector<Tensor> outputs,
                             BackwardFn backward) {
  std::vector<Variable> results;
  results.reserve(outputs.size());
  // Only floating outputs carry a gradient, as in PyTorch: an integer or bool
  // result (a cast to i64, indices) is a constant to backward.
  const bool differentiable =
      std::any_of(outputs.begin(), outputs.end(), [](const Tensor& t) { return is_floating(t.dtype()); });
  if (!differentiable || !any_requires_grad(inputs)) {
    for (Tensor& t : outputs) results.emplace_back(std::move(t));
    return results;
  }
  std::vector<Edge> edges;
  std::vector<TensorMeta> input_meta;
  for (const Variable& v : inputs) {
    edges.push_back(v.defined() ? v.gradient_edge() : Edge{});
    input_meta.push_back(v.defined() ? TensorMeta::of(v.data()) : TensorMeta{});
  }
  std::vector<TensorMeta> output_meta;
  for (const Tensor& t : outputs) output_meta.push_back(TensorMeta::of(t));
  auto node = std::make_shared<FunctionNode>(std::move(name), std::move(edges), std::move(input_meta),
                                             std::move(output_meta), std::move(backward));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (is_floating(outputs[i].dtype())) {
      results.push_back(Variable::from_node(std::move(outputs[i]), node, static_cast<int>(i)));
    } else {
      results.emplace_back(std::move(outputs[i]));
    }
  }
  return results;
}

}  // namespace ts::autograd
