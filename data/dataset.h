// The interface between readers and the loader: a dataset is a random-access
// collection of examples. Readers and synthetic sets implement it; samplers
// choose indices; the loader's workers call get() and collate the results.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ts::data {

// One sample as CPU tensors. Image sets give {image, label}: image u8 or f32
// [C, H, W] (volumes [C, D, H, W]), label an i64 scalar. Other sets document
// their fields where they are defined.
struct Example {
  std::vector<Tensor> fields;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Thread safe: loader workers call it concurrently. `index` in [0, size()).
  virtual absl::StatusOr<Example> get(int64_t index) const = 0;
};

}  // namespace ts::data
