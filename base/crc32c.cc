#include "base/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

namespace ts {
namespace {

static_assert(std::endian::native == std::endian::little, "the 8-byte step below reads words as little-endian");

// Slicing by 8: table k maps a byte to its CRC contribution k bytes further
// on, so eight table lookups consume eight bytes (~1-2 GB/s without special
// instructions; checkpoints are written every few minutes, so this is ample).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
    t[0][i] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

uint32_t crc32c(absl::string_view data, uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t size = data.size();
  uint32_t state = ~crc;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    word ^= state;
    state = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^ kTables[5][(word >> 16) & 0xFF] ^
            kTables[4][(word >> 24) & 0xFF] ^ kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
            kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
  }
  for (; size > 0; ++p, --size) state = (state >> 8) ^ kTables[0][(state ^ *p) & 0xFF];
  return ~state;
}

}  // namespace ts
