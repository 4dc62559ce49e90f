// Option and index checks the synthetic sets share, with errors that name
// the set and the option.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ts::data {

inline absl::Status check_at_least(const char* set, const char* option, int64_t value, int64_t min) {
  if (value >= min) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(set, ": ", option, " must be at least ", min, ", got ", value));
}

inline absl::Status check_index(const char* set, int64_t index, int64_t size) {
  if (index >= 0 && index < size) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(set, ": index ", index, " is outside [0, ", size, ")"));
}

}  // namespace ts::data
