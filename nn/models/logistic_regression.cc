#include "nn/models/logistic_regression.h"

#include "autograd/ops.h"
#include "nn/linear.h"
#include "tensor/status_macros.h"

namespace ts::nn::models {
namespace {

class LogisticRegression final : public Module {
 public:
  explicit LogisticRegression(std::shared_ptr<Linear> linear)
      : Module("LogisticRegression"), linear_(register_module("linear", std::move(linear))) {}

  absl::StatusOr<Variable> forward(const Variable& x) override {
    ASSIGN_OR_RETURN(Variable logit, linear_->forward(x));
    // [N, 1] -> [N], to line up with a label vector.
    return autograd::squeeze(logit, -1);
  }

 private:
  std::shared_ptr<Linear> linear_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<Module>> logistic_regression(int64_t n_features) {
  ASSIGN_OR_RETURN(std::shared_ptr<Linear> linear, Linear::create(n_features, 1, /*bias=*/false));
  return std::make_shared<LogisticRegression>(std::move(linear));
}

}  // namespace ts::nn::models
