#include "autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::autograd {
namespace {

struct PendingNode {
  int dependencies = 0;       // incoming edges not yet delivered
  std::vector<Tensor> grads;  // summed gradient per output
};

struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

Tensor root_gradient(const Variable& root, const Tensor& grad, size_t index) {
  TS_CHECK(root.requires_grad(), "backward: root ", index, " (", root.data().describe(),
           ") does not require grad: no input of the ops that made it requires grad");
  if (!grad.defined()) {
    TS_CHECK(root.numel() == 1, "backward: the gradient can be implied only for one-element roots; root ", index,
             " is ", root.data().describe(), ", pass its gradient");
    return ones(root.shape(), {root.dtype(), root.device()});
  }
  TS_CHECK(Dims(grad.shape()) == Dims(root.shape()) && grad.device() == root.device(), "backward: gradient ",
           grad.describe(), " for root ", index, " ", root.data().describe());
  // In the root's dtype, as PyTorch converts it: every backward expects its
  // output's.
  return ts::to(grad, root.dtype());
}

void accumulate(PendingNode& pending, int output_nr, Tensor grad) {
  Tensor& slot = pending.grads[output_nr];
  slot = slot.defined() ? slot + grad : std::move(grad);
}

}  // namespace

void backward(absl::Span<const Variable> roots, absl::Span<const Tensor> grads, bool retain_graph) {
  TS_CHECK(grads.size() == roots.size(), "backward: ", roots.size(), " roots but ", grads.size(), " gradients");
  // Gradients of gradients are not recorded.
  NoGradGuard no_grad;

  // Count the edges into every node reachable from the roots.
  std::unordered_map<Node*, PendingNode> pending;
  std::vector<std::shared_ptr<Node>> keep_alive;  // nodes may be owned only by the graph
  std::vector<Node*> stack;
  auto visit = [&](const std::shared_ptr<Node>& node) {
    auto [it, inserted] = pending.try_emplace(node.get());
    if (inserted) {
      it->second.grads.resize(node->outputs().size());
      keep_alive.push_back(node);
      stack.push_back(node.get());
    }
  };
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    root_edges.push_back(roots[i].gradient_edge());
    if (root_edges.back().node != nullptr) visit(root_edges.back().node);
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& edge : node->next_edges()) {
      if (edge.node == nullptr) continue;
      visit(edge.node);
      ++pending[edge.node.get()].dependencies;
    }
  }

  for (size_t i = 0; i < roots.size(); ++i) {
    accumulate(pending[root_edges[i].node.get()], root_edges[i].output_nr, root_gradient(roots[i], grads[i], i));
  }

  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  for (auto& [node, state] : pending) {
    if (state.dependencies == 0) ready.push(node);
  }
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    PendingNode& state = pending[node];
    for (size_t out = 0; out < state.grads.size(); ++out) {
      if (state.grads[out].defined()) continue;
      const TensorMeta& meta = node->outputs()[out];
      state.grads[out] = zeros(meta.shape, {meta.dtype, meta.device});
    }
    std::vector<Tensor> input_grads = node->apply(std::move(state.grads));
    state.grads.clear();
    if (!retain_graph) node->release();
    const std::vector<Edge>& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& edge = edges[i];
      if (edge.node == nullptr) continue;
      PendingNode& next = pending[edge.node.get()];
      if (i < input_grads.size() && input_grads[i].defined()) {
        accumulate(next, edge.output_nr, std::move(input_grads[i]));
      }
      if (--next.dependencies == 0) ready.push(edge.node.get());
    }
  }
}

}  // namespace ts::autograd
