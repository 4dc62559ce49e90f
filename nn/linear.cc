#include "nn/linear.h"

#include <cmath>

#include "autograd/ops.h"
#include "base/error.h"
#include "nn/init.h"
#include "tensor/ops.h"

namespace ts::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : Module("Linear"), in_features_(in_features), out_features_(out_features) {
  TS_CHECK(in_features > 0 && out_features > 0, "Linear(in_features=", in_features, ", out_features=", out_features,
           "): sizes must be positive");
  Tensor weight = empty({out_features, in_features});
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  register_parameter("weight", std::move(weight));
  if (bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    register_parameter("bias", uniform({out_features}, -bound, bound));
  }
}

Variable Linear::forward(const Variable& x) {
  TS_CHECK(x.dim() >= 1 && x.size(-1) == in_features_, "Linear(in_features=", in_features_,
           ", out_features=", out_features_, "): input ", x.data().describe(), " needs ", in_features_,
           " features in its last dim");
  // The parameters are read by name on each call: set_parameter may have
  // replaced them.
  const Variable y = matmul(x, transpose(param("weight"), 0, 1));
  return has_param("bias") ? y + param("bias") : y;
}

}  // namespace ts::nn
