// CRC-32C (Castagnoli polynomial), the checksum of the checkpoint format.
// Incremental: crc32c_extend(crc32c(a), b) == crc32c(a + b).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ts::nn {

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

}  // namespace ts::nn
