// A node of the backward graph: the backward of one recorded op. It takes the
// gradients of the op's outputs and returns the gradients of its inputs, which
// the engine routes along `next_edges` to the nodes that produced the inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::autograd {

class Node;

// Where one input of an op came from: output `output_nr` of `node`. A null
// node means the input needs no gradient.
struct Edge {
  std::shared_ptr<Node> node;
  int output_nr = 0;
};

// Shape, dtype and device of a tensor, kept instead of the tensor so that
// gradients can be checked and zero-filled without holding the memory.
struct TensorMeta {
  Shape shape;
  DType dtype = DType::kF32;
  Device device = Device::cpu();
  static TensorMeta of(const Tensor& t) { return {t.shape(), t.dtype(), t.device()}; }
};

class Node {
 public:
  // Backward nodes run in decreasing sequence number among those ready, so
  // gradients flow in the reverse of forward order.
  Node(std::string name, std::vector<Edge> next_edges, std::vector<TensorMeta> outputs);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // `grad_outputs` has one defined tensor per output (the engine fills
  // outputs that received no gradient with zeros). Returns one tensor per
  // next edge, undefined where no gradient flows.
  virtual std::vector<Tensor> apply(std::vector<Tensor> grad_outputs) = 0;
  // Drops what the backward saved; a later apply() is an error.
  virtual void release() {}

  const std::string& name() const { return name_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<TensorMeta>& outputs() const { return outputs_; }
  uint64_t sequence_nr() const { return sequence_nr_; }

 protected:
  // Leaf accumulators run as soon as they are ready: a parameter's gradient
  // is final then, and DDP hooks should fire without delay.
  void set_sequence_nr(uint64_t nr) { sequence_nr_ = nr; }

 private:
  std::string name_;
  std::vector<Edge> next_edges_;
  std::vector<TensorMeta> outputs_;
  uint64_t sequence_nr_;
};

// What a backward function is handed: the gradient of each output, and which
// inputs want a gradient (so that it can skip the work for the others).
struct GradContext {
  absl::Span<const Tensor> grad_outputs;
  const std::vector<bool>& needs_input_grad;
  const Tensor& grad(size_t output = 0) const { return grad_outputs[output]; }
  bool needs(size_t input) const { return needs_input_grad[input]; }
};

// Returns one gradient per input of the op (undefined for inputs not needed).
using BackwardFn = std::function<std::vector<Tensor>(const GradContext&)>;

// The node of an ordinary op: a backward closure over the tensors it saved.
class FunctionNode final : public Node {
 public:
  FunctionNode(std::string name, std::vector<Edge> next_edges, std::vector<TensorMeta> inputs,
               std::vector<TensorMeta> outputs, BackwardFn backward);

  std::vector<Tensor> apply(std::vector<Tensor> grad_outputs) override;
  void release() override { backward_ = nullptr; }

 private:
  std::vector<TensorMeta> inputs_;
  std::vector<bool> needs_input_grad_;
  BackwardFn backward_;
};

}  // namespace ts::autograd
