// Recording an op for backward. A differentiable op computes its outputs on
// plain tensors, then calls record() with its inputs and a backward closure;
// the closure must capture tensors (never Variables, which would make a cycle
// through the graph). Nothing is recorded under NoGradGuard or when no input
// requires a gradient.
#pragma once

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "autograd/node.h"
#include "autograd/variable.h"

namespace ts::autograd {

// Whether recording would happen for these inputs.
bool any_requires_grad(absl::Span<const Variable> inputs);

std::vector<Variable> record(std::string name, absl::Span<const Variable> inputs, std::vector<Tensor> outputs,
                             BackwardFn backward);

inline Variable record(std::string name, absl::Span<const Variable> inputs, Tensor output, BackwardFn backward) {
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(output));
  return record(std::move(name), inputs, std::move(outputs), std::move(backward))[0];
}

}  // namespace ts::autograd
