// TFRecord framing, the container of TensorBoard event files: per record a
// little-endian u64 length, the masked CRC-32C of those 8 bytes, the data, and
// the masked CRC-32C of the data.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::tasks {

// Appends one framed record to `out`.
void append_tfrecord(absl::string_view data, std::string& out);

// Splits a whole file's bytes into records, checking both CRCs of each;
// `name` (the file) appears in errors with the record's index and offset.
absl::StatusOr<std::vector<std::string>> read_tfrecords(absl::string_view bytes, absl::string_view name);

}  // namespace ts::tasks
