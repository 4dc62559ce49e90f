// The default data of the logistic regression task: Fashion-MNIST as a
// binary problem, upper-body garments (T-shirt/top, pullover, coat, shirt:
// classes 0, 2, 4, 6) against the rest, written as LIBSVM text (label +1 or
// -1, pixel j as feature j+1, zeros omitted) so the task reads it through
// the same parser as MLBench's epsilon set. Like epsilon's, every row is
// scaled to unit L2 norm: MLBench's lr of 4 assumes it.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "data/dataset.h"

namespace ts::tasks {

// Whether a Fashion-MNIST class is an upper-body garment (label +1).
bool is_upper_body(int64_t fashion_class);

// Writes every example of `images` ({u8 [1, 28, 28], i64 label}) to `path`
// atomically.
absl::Status write_upper_body_libsvm(const data::Dataset& images, const std::string& path);

}  // namespace ts::tasks
