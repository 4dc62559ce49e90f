#include "nn/sequential.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace ts::nn {

Variable Sequential::forward(const Variable& x) {
  Variable y = x;
  for (size_t i = 0; i < stages_.size(); ++i) {
    try {
      y = stages_[i](y);
    } catch (const Error& e) {
      throw Error(e.code(),
                  absl::StrCat("Sequential[", i, "] (", children()[i].second->type_name(), "): ", e.message()));
    }
  }
  return y;
}

}  // namespace ts::nn
