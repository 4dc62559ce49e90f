// What the JPEG and PNG fuzzers share: an error names the input ("fuzz: "),
// and the fused train and eval pipelines, which take either format by its
// signature, give a [3, 16, 16] image or such an error.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "data/transforms/jpeg_pipeline.h"
#include "tests/fuzz/fuzz_check.h"

namespace ts::fuzz {

inline void check_named_error(const absl::Status& status) { FUZZ_CHECK(absl::StartsWith(status.message(), "fuzz: ")); }

inline void check_pipelines(absl::string_view bytes) {
  data::RandomStream rng(bytes.size(), 0);
  for (const auto& pipeline :
       {data::transforms::train_pipeline({.size = 16}), data::transforms::eval_pipeline(20, 16)}) {
    const auto out = pipeline(bytes, "fuzz", rng);
    if (!out.ok()) {
      check_named_error(out.status());
      continue;
    }
    FUZZ_CHECK(out->dim() == 3 && out->size(0) == 3 && out->size(1) == 16 && out->size(2) == 16);
  }
}

}  // namespace ts::fuzz
