// CRC-32C (Castagnoli polynomial): the checksum of checkpoints, run-state
// files and TFRecord event framing. Incremental:
// crc32c(b, crc32c(a)) == crc32c(a + b).
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace ts {

// CRC-32C of `data`, continuing from `crc` (0 to start).
uint32_t crc32c(absl::string_view data, uint32_t crc = 0);

// TensorFlow's mask: a CRC of data that itself holds CRCs is not a weak one.
inline uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace ts
