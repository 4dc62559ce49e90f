#include "tests/nn/module_gradcheck.h"

#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "base/error.h"
#include "base/status_macros.h"

namespace ts::nn::testing {

absl::Status gradcheck_module(Module& m, const Tensor& x, const std::function<Variable(const Variable&)>& forward) {
  RETURN_IF_ERROR(capture([&] { m.to(DType::kF64); }));
  std::vector<Tensor> inputs = {x};
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) {
    names.push_back(name);
    inputs.push_back(p.data());
  }
  return autograd::gradcheck(
      [&](const std::vector<Variable>& v) {
        for (size_t i = 0; i < names.size(); ++i) m.set_parameter(names[i], v[i + 1]);
        return forward(v[0]);
      },
      inputs);
}

}  // namespace ts::nn::testing
