#include "nn/sequential.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ts::nn {

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) : Module("Sequential") {
  for (auto& m : modules) push_back(std::move(m));
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(children().size()), std::move(module));
}

absl::StatusOr<Variable> Sequential::forward(const Variable& x) {
  Variable y = x;
  for (const auto& [name, child] : children()) {
    absl::StatusOr<Variable> out = child->forward(y);
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("Sequential[", name, "] (", child->type_name(), "): ",
                                       out.status().message()));
    }
    y = *std::move(out);
  }
  return y;
}

}  // namespace ts::nn
