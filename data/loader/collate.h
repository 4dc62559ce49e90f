// Collation: the examples of a batch become one tensor per field, stacked
// along a new leading batch dim, in memory from a HostBufferPool (pinned when
// the loader feeds a GPU). Fields that hold variable-length sequences may be
// padded to the batch's longest instead.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/dataset.h"
#include "data/loader/host_buffer_pool.h"

namespace ts::data {

struct CollateOptions {
  // Fields whose dim 0 may differ between examples (token sequences): each
  // is written at the start of its row and the rest is filled with pad_value.
  std::vector<int> padded_fields;
  double pad_value = 0;
};

// Every example must have the same number of fields, and each field one
// dtype and shape across the batch (padded fields: the same shape after dim
// 0). Errors name the field, the example and both shapes. `pool` null: plain
// CPU tensors.
absl::StatusOr<std::vector<Tensor>> collate(absl::Span<const Example> examples, const CollateOptions& options = {},
                                            HostBufferPool* pool = nullptr);

}  // namespace ts::data
