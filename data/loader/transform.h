// What the loader's workers apply to each example before collating it: a
// function of the example and the sample's own random stream (so the result
// depends on the seed, epoch and sample index only). data/transforms builds
// the standard ones; compose chains them.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "data/loader/random_stream.h"

namespace ts::data {

using Transform = std::function<absl::StatusOr<Example>(Example, RandomStream&)>;

// Applies `transforms` in order, drawing from one stream; the first error
// stops the chain.
Transform compose(std::vector<Transform> transforms);

}  // namespace ts::data
