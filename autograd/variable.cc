#include "autograd/variable.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/engine.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::autograd {

struct Variable::Impl {
  Tensor data;
  Tensor grad;
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;
  int output_nr = 0;
  // A leaf's accumulator is owned by the graphs that use it, so it dies with
  // them; the leaf only finds it again while one is alive.
  std::weak_ptr<Node> grad_accumulator;
  std::map<int, GradReadyHook> hooks;
  int next_hook_id = 0;
  std::string name;
};

namespace {

// Whether a leaf's first gradient can become its grad as it is, as PyTorch's
// AccumulateGrad steals it: nothing else holds its memory (not another
// input's gradient, a saved tensor or the caller's), it spans all of that
// memory, and it is laid out densely as a copy of it would be. Otherwise it
// is copied: it may be a broadcast view, or shared.
bool can_take_as_grad(const Tensor& gradient) {
  return gradient.storage().use_count() == 1 && gradient.offset() == 0 &&
         gradient.storage()->nbytes() == gradient.numel() * dtype_size(gradient.dtype()) &&
         gradient.strides() == dense_strides(gradient.shape(), gradient.suggest_memory_format());
}

// Sums incoming gradients into a leaf's grad, then runs its hooks.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const std::shared_ptr<Variable::Impl>& leaf, TensorMeta meta)
      : Node("AccumulateGrad", {}, {std::move(meta)}), leaf_(leaf) {
    set_sequence_nr(UINT64_MAX);
  }

  std::vector<Tensor> apply(std::vector<Tensor> grad_outputs) override {
    std::shared_ptr<Variable::Impl> leaf = leaf_.lock();
    // A leaf frozen between its forward and this backward takes nothing and
    // runs no hook, as in PyTorch: an optimizer would otherwise step it.
    if (leaf == nullptr || !leaf->requires_grad) return {};
    Tensor& incoming = grad_outputs[0];
    if (leaf->grad.defined()) {
      leaf->grad = leaf->grad + incoming;
    } else {
      leaf->grad = can_take_as_grad(incoming) ? std::move(incoming) : clone(incoming);
    }
    // Hooks may add or remove hooks: iterate over a snapshot.
    const std::map<int, Variable::GradReadyHook> hooks = leaf->hooks;
    const Variable leaf_var = Variable::from_impl(leaf);
    for (const auto& [id, hook] : hooks) hook(leaf_var);
    return {};
  }

 private:
  std::weak_ptr<Variable::Impl> leaf_;
};

}  // namespace

Variable::Variable(Tensor data, bool requires_grad) : impl_(std::make_shared<Impl>()) {
  TS_CHECK(!requires_grad || !data.defined() || is_floating(data.dtype()), "Variable(", data.describe(),
           ", requires_grad): only floating-point tensors have gradients");
  impl_->data = std::move(data);
  impl_->requires_grad = requires_grad;
}

const Tensor& Variable::data() const { return impl_->data; }
void Variable::set_data(Tensor data) const { impl_->data = std::move(data); }

bool Variable::requires_grad() const { return impl_->requires_grad; }

void Variable::set_requires_grad(bool requires_grad) const {
  TS_CHECK(is_leaf(), "set_requires_grad on the result of ", impl_->grad_fn->name(),
           ": only leaves can change it (use detach() for a leaf with the same value)");
  TS_CHECK(!requires_grad || is_floating(dtype()), "set_requires_grad on ", data().describe(),
           ": only floating-point tensors have gradients");
  impl_->requires_grad = requires_grad;
}

bool Variable::is_leaf() const { return impl_->grad_fn == nullptr; }
const Tensor& Variable::grad() const { return impl_->grad; }
void Variable::set_grad(Tensor grad) const { impl_->grad = std::move(grad); }
const std::shared_ptr<Node>& Variable::grad_fn() const { return impl_->grad_fn; }

Variable Variable::detach() const {
  Variable out(impl_->data);
  out.impl_->name = impl_->name;
  return out;
}

void Variable::backward(Tensor grad, bool retain_graph) const {
  autograd::backward({*this}, {std::move(grad)}, retain_graph);
}

int Variable::add_grad_ready_hook(GradReadyHook hook) const {
  const int id = impl_->next_hook_id++;
  impl_->hooks.emplace(id, std::move(hook));
  return id;
}

void Variable::remove_grad_ready_hook(int id) const { impl_->hooks.erase(id); }

const std::string& Variable::name() const { return impl_->name; }
void Variable::set_name(std::string name) const { impl_->name = std::move(name); }

Variable Variable::from_node(Tensor data, std::shared_ptr<Node> grad_fn, int output_nr) {
  Variable out(std::move(data));
  out.impl_->requires_grad = grad_fn != nullptr;
  out.impl_->grad_fn = std::move(grad_fn);
  out.impl_->output_nr = output_nr;
  return out;
}

Variable Variable::from_impl(std::shared_ptr<Impl> impl) { return Variable(std::move(impl)); }

Edge Variable::gradient_edge() const {
  if (!impl_->requires_grad) return {};
  if (impl_->grad_fn != nullptr) return {impl_->grad_fn, impl_->output_nr};
  std::shared_ptr<Node> accumulator = impl_->grad_accumulator.lock();
  if (accumulator == nullptr) {
    accumulator = std::make_shared<AccumulateGrad>(impl_, TensorMeta::of(impl_->data));
    impl_->grad_accumulator = accumulator;
  }
  return {accumulator, 0};
}

}  // namespace ts::autograd
