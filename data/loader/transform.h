// What the loader's workers apply to each example before collating it: a
// function of the example and the sample's own random stream (so the result
// depends on the seed, epoch and sample index only). data/transforms builds
// the standard ones; compose chains them.
//
// A Transform stays in Status-land (it returns absl::StatusOr) although it
// wraps tensor math: it is often user code, and its failures are expected
// outcomes of the data (an image of the wrong rank, a crop larger than the
// image) that the loader reports for the sample at fault. The tensor ops it
// calls throw ts::Error on misuse; a Transform need not catch that, since the
// loader turns what a transform throws into that sample's error just like a
// returned one (DataLoader::next). data/transforms' functions follow the
// same rule: StatusOr results, checks on the data as Status errors.
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
