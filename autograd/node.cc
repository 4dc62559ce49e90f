#include "autograd/node.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace ts::autograd {
namespace {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Node::Node(std::string name, std::vector<Edge> next_edges, std::vector<TensorMeta> outputs)
    : name_(std::move(name)),
      next_edges_(std::move(next_edges)),
      outputs_(std::move(outputs)),
      sequence_nr_(next_sequence_nr()) {}

Node::~Node() {
  // Destroying a long graph recursively (node -> edge -> node ...) would
  // overflow the stack on deep unrolls: the outermost destructor collects the
  // nodes only this one owns and destroys them from a loop.
  thread_local std::vector<std::shared_ptr<Node>>* doomed = nullptr;
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = doomed == nullptr;
  if (outermost) doomed = &local;
  for (Edge& edge : next_edges_) {
    if (edge.node != nullptr && edge.node.use_count() == 1) doomed->push_back(std::move(edge.node));
  }
  if (!outermost) return;
  while (!local.empty()) {
    std::shared_ptr<Node> node = std::move(local.back());
    local.pop_back();
    node.reset();
  }
  doomed = nullptr;
}

FunctionNode::FunctionNode(std::string name, std::vector<Edge> next_edges, std::vector<TensorMeta> inputs,
                           std::vector<TensorMeta> outputs, BackwardFn backward)
    : Node(std::move(name), std::move(next_edges), std::move(outputs)),
      inputs_(std::move(inputs)),
      backward_(std::move(backward)) {
  for (const Edge& edge : this->next_edges()) needs_input_grad_.push_back(edge.node != nullptr);
}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor> grad_outputs) {
  TS_CHECK_CODE(absl::StatusCode::kFailedPrecondition, backward_, "backward through ", name(),
                " a second time: its saved tensors were freed after the first backward; pass "
                "retain_graph=true to the first one");
  std::vector<Tensor> grads;
  try {
    grads = backward_(GradContext{grad_outputs, needs_input_grad_});
  } catch (const Error& e) {
    throw Error(e.code(), absl::StrCat("in the backward of ", name(), ": ", e.message()));
  }
  TS_CHECK_CODE(absl::StatusCode::kInternal, grads.size() == inputs_.size(), "backward of ", name(), " returned ",
                grads.size(), " gradients for ", inputs_.size(), " inputs");
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!needs_input_grad_[i] || !g.defined()) continue;
    const TensorMeta& in = inputs_[i];
    TS_CHECK_CODE(absl::StatusCode::kInternal,
                  Dims(g.shape()) == Dims(in.shape) && g.dtype() == in.dtype && g.device() == in.device, "backward of ",
                  name(), " returned a gradient ", g.describe(), " for input ", i, " of shape ", shape_str(in.shape),
                  " ", dtype_name(in.dtype), " on ", in.device.to_string());
  }
  return grads;
}

}  // namespace ts::autograd
