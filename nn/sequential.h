// Sequential: children named "0", "1", ... applied in order (PyTorch's
// nn.Sequential, so the names in state dicts match). Any module whose forward
// maps one Variable to one can be a stage; the container keeps each stage's
// typed forward as a callable, so no module needs a virtual forward.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace ts::nn {

class Sequential final : public Module {
 public:
  Sequential() : Module("Sequential") {}
  template <typename... M>
  explicit Sequential(std::shared_ptr<M>... modules) : Module("Sequential") {
    (push_back(std::move(modules)), ...);
  }

  // M must have `Variable forward(const Variable&)`.
  template <typename M>
  void push_back(std::shared_ptr<M> module) {
    Handle<M> stage = register_module(std::to_string(stages_.size()), std::move(module));
    stages_.push_back([stage](const Variable& x) { return stage(x); });
  }
  size_t size() const { return stages_.size(); }

  // Each stage's output feeds the next; an Error names the failing stage.
  Variable forward(const Variable& x);

 private:
  std::vector<std::function<Variable(const Variable&)>> stages_;
};

}  // namespace ts::nn
