// CRC-32C (nn/crc32c.h, the checkpoint format's checksum) over strings, and
// the masked form TFRecord framing uses; also the checksum of run-state files.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace ts::tasks {

// CRC-32C of `data`, continuing from `crc` (0 to start).
uint32_t crc32c(absl::string_view data, uint32_t crc = 0);

// TensorFlow's mask: a CRC of data that itself holds CRCs is not a weak one.
inline uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace ts::tasks
