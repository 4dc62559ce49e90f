// Variable: a tensor that takes part in automatic differentiation. It holds
// the value, the accumulated gradient and, for op results, the node that
// computes its inputs' gradients. Copies share all of that (like a
// shared_ptr); `data()` is the plain tensor, for ops that need no gradient.
// The differentiable ops and operators on Variables are in autograd/ops.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "autograd/node.h"
#include "tensor/tensor.h"

namespace ts::autograd {

class Variable {
 public:
  // Called once per backward pass with the leaf whose gradient is now final.
  // An Error it throws stops the backward, which rethrows it.
  using GradReadyHook = std::function<void(const Variable&)>;

  Variable() = default;
  // A leaf. Only floating-point tensors can require a gradient (an Error
  // otherwise, as set_requires_grad gives).
  explicit Variable(Tensor data, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  // Replaces the value (same shape and dtype expected by whoever uses the
  // gradient); the graph and gradient are untouched.
  void set_data(Tensor data) const;

  const Shape& shape() const { return data().shape(); }
  int64_t dim() const { return data().dim(); }
  int64_t size(int64_t d) const { return data().size(d); }
  int64_t numel() const { return data().numel(); }
  DType dtype() const { return data().dtype(); }
  Device device() const { return data().device(); }

  bool requires_grad() const;
  // Leaves only; throws for op results and non-floating tensors.
  void set_requires_grad(bool requires_grad) const;
  bool is_leaf() const;

  // Undefined until a backward reaches this leaf.
  const Tensor& grad() const;
  void set_grad(Tensor grad) const;
  void clear_grad() const { set_grad(Tensor()); }

  // The node that produced this value (null for leaves).
  const std::shared_ptr<Node>& grad_fn() const;

  // The same value, cut from the graph.
  Variable detach() const;

  // Backpropagates from this value: `grad` defaults to 1 for a one-element
  // value. The graph is freed unless retain_graph.
  void backward(Tensor grad = Tensor(), bool retain_graph = false) const;

  // Fires when this leaf's gradient is final in a backward pass (after
  // accumulation into grad()); an Error it throws ends the backward with that
  // error. Returns an id for remove_grad_ready_hook.
  int add_grad_ready_hook(GradReadyHook hook) const;
  void remove_grad_ready_hook(int id) const;

  const std::string& name() const;
  void set_name(std::string name) const;

  // Identity of the shared state: equal for copies of one Variable.
  const void* id() const { return impl_.get(); }

  // ---- Used by autograd internals.
  struct Impl;
  // An op result carrying output `output_nr` of `grad_fn`.
  static Variable from_node(Tensor data, std::shared_ptr<Node> grad_fn, int output_nr);
  static Variable from_impl(std::shared_ptr<Impl> impl);
  // The edge that gradients for this value flow along (null node if it
  // needs none); creates a leaf's accumulator on first use.
  Edge gradient_edge() const;

 private:
  explicit Variable(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace ts::autograd
