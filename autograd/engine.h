// The backward engine: runs the graph behind `roots` in reverse topological
// order, summing gradients that meet at a node, and frees it afterwards
// unless retain_graph.
#pragma once

#include "absl/types/span.h"
#include "autograd/variable.h"

namespace ts::autograd {

// `grads` holds one gradient per root; an undefined one means 1 and is only
// allowed for one-element roots.
void backward(absl::Span<const Variable> roots, absl::Span<const Tensor> grads, bool retain_graph = false);

}  // namespace ts::autograd
