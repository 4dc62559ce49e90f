// nn::Module: the unit models are built from. A module owns named parameters
// (leaf Variables that require a gradient), buffers (plain tensors such as
// running statistics) and child modules; names nest with dots as in PyTorch
// ("layer1.0.conv1.weight"), so state dicts line up with torchvision's.
//
// Module has no forward of its own: each layer declares the forward its
// inputs need (Linear::forward(x), LSTM::forward(x, state),
// MultiheadAttention::forward(q, k, v, mask)), and holders call it with the
// call syntax (Handle below), so model code reads like the math:
//   Variable y = relu(bn1(conv1(x)));
// Misuse throws ts::Error; loading a state dict, whose entries come from a
// file, returns a Status.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ts::nn {

using autograd::Variable;

// Tensors by name, in a meaningful order (registration order for modules).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// A module as its parent or model code holds it: shared ownership (the
// parent's registry holds it too), members through ->, and its forward
// through the call syntax: conv1(x) is conv1->forward(x), whatever that
// forward's signature.
template <typename M>
class Handle {
 public:
  Handle() = default;
  Handle(std::shared_ptr<M> module) : module_(std::move(module)) {}  // NOLINT: a handle is a pointer
  template <typename... Args>
  auto operator()(Args&&... args) const {
    return module_->forward(std::forward<Args>(args)...);
  }
  M* operator->() const { return module_.get(); }
  M& operator*() const { return *module_; }
  const std::shared_ptr<M>& ptr() const { return module_; }
  explicit operator bool() const { return module_ != nullptr; }

 private:
  std::shared_ptr<M> module_;
};

class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // "Linear", "BatchNorm2d", ...: names the module in error messages.
  const std::string& type_name() const { return type_name_; }

  // ---- Recursive views, PyTorch's order: a module's own entries in
  // registration order, then each child's under "<child name>.".
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  NamedTensors named_buffers() const;
  // Every descendant (not this module itself), depth first, parents first.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }
  int64_t num_parameters() const;

  // ---- State dict: per module, parameters' values then buffers, then
  // children (PyTorch's state_dict order). The tensors are the module's own
  // (not copies).
  NamedTensors state_dict() const;
  // Copies `state` into the module's tensors in place (any device; dtypes
  // must match). Strict: a missing or unexpected name, or a shape or dtype
  // mismatch, is an error naming the entry, and nothing is copied then.
  absl::Status load_state_dict(const NamedTensors& state);

  // ---- Mode and placement, recursive.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Moves parameters (and their gradients) and buffers.
  void to(Device device);
  // Converts floating-point parameters, gradients and buffers; integer
  // buffers (num_batches_tracked) keep their dtype. With `selected`, only
  // the own tensors of the modules (this one and descendants) it selects.
  using ModuleFilter = std::function<bool(const Module&)>;
  void to(DType dtype, const ModuleFilter& selected = nullptr);
  // Drops every parameter's gradient (PyTorch's set_to_none=True): the next
  // backward writes a fresh one.
  void zero_grad();

  // Replaces one of this module's own parameters by `value` (same shape,
  // dtype and device), e.g. to tie weights or to put a gradcheck leaf in. A
  // tied parameter is one entry of named_parameters (its first name) and
  // one per name in state_dict, as in PyTorch.
  void set_parameter(absl::string_view name, Variable value);

 protected:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}

  // Called on this module and every descendant after to(device) or
  // to(dtype) has replaced their tensors, for a layer whose kernels want its
  // parameters laid out their way (the LSTM's in cuDNN's weight space).
  virtual void placement_changed() {}

  // Registration. Names are the layer's own identifiers, so a bad one (empty,
  // dotted, repeated) is a bug: an Error of code kInternal.
  Variable register_parameter(std::string name, Tensor value, bool requires_grad = true);
  void register_buffer(std::string name, Tensor value);
  template <typename M>
  Handle<M> register_module(std::string name, std::shared_ptr<M> child) {
    add_child(std::move(name), child);
    return Handle<M>(std::move(child));
  }

  // This module's own entries by name; asking for one that was never
  // registered is a bug (kInternal).
  const Variable& param(absl::string_view name) const;
  const Tensor& buffer(absl::string_view name) const;
  // Whether an own parameter of that name exists (optional ones: bias).
  bool has_param(absl::string_view name) const;

 private:
  void add_child(std::string name, std::shared_ptr<Module> child);
  void check_new_name(const std::string& name) const;
  template <typename F>
  void for_each_tensor_slot(F&& f, const ModuleFilter& selected);
  void notify_placement_changed();

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Variable>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace ts::nn
