#include "data/loader/transform.h"

#include <utility>

#include "base/status_macros.h"

namespace ts::data {

Transform compose(std::vector<Transform> transforms) {
  return [transforms = std::move(transforms)](Example example, RandomStream& rng) -> absl::StatusOr<Example> {
    for (const Transform& t : transforms) {
      ASSIGN_OR_RETURN(example, t(std::move(example), rng));
    }
    return example;
  };
}

}  // namespace ts::data
