// Sequential: children named "0", "1", ... applied in order (PyTorch's
// nn.Sequential, so the names in state dicts match).
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace ts::nn {

class Sequential final : public Module {
 public:
  Sequential() : Module("Sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);

  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return children().size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const { return children()[i].second; }

  // Each child's output feeds the next; an error names the failing child.
  absl::StatusOr<Variable> forward(const Variable& x) override;
};

}  // namespace ts::nn
