// CRC-32C against published vectors and a bit-at-a-time reference (every
// length and alignment the 8-byte step and its tail see), incremental
// extension, and TensorFlow's mask.
#include "base/crc32c.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

// The definition: reflected Castagnoli polynomial, one bit at a time.
uint32_t reference_crc32c(absl::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (const char byte : data) {
    c ^= static_cast<unsigned char>(byte);
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
  }
  return ~c;
}

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // the CRC catalogue's check value
  EXPECT_EQ(crc32c(""), 0u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += static_cast<char>(i);
    descending += static_cast<char>(31 - i);
  }
  // RFC 3720 B.4.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, MatchesTheBitwiseDefinitionAtEveryLengthAndAlignment) {
  const uint64_t seed = ts::testing::test_seed();
  SCOPED_TRACE("TS_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::string buffer(80, '\0');
  for (char& c : buffer) c = static_cast<char>(rng());
  const absl::string_view all = buffer;
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length = 0; offset + length <= all.size(); ++length) {
      const absl::string_view data = all.substr(offset, length);
      EXPECT_EQ(crc32c(data), reference_crc32c(data)) << "offset " << offset << " length " << length;
    }
  }
}

TEST(Crc32cTest, ExtendsIncrementally) {
  EXPECT_EQ(crc32c("56789", crc32c("1234")), crc32c("123456789"));
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += static_cast<char>(i * 31 + 7);
  const absl::string_view text = long_text;
  for (size_t split : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    EXPECT_EQ(crc32c(text.substr(split), crc32c(text.substr(0, split))), crc32c(text)) << split;
  }
}

TEST(Crc32cTest, MaskIsTensorFlows) {
  EXPECT_EQ(mask_crc(0), 0xA282EAD8u);
  EXPECT_EQ(mask_crc(0xE3069283u), 0xC78AB0E5u);
  // TensorFlow's reader unmasks: subtract the delta, rotate left by 15.
  const auto unmask = [](uint32_t masked) {
    const uint32_t rot = masked - 0xA282EAD8u;
    return (rot >> 17) | (rot << 15);
  };
  for (const uint32_t crc : {0u, 1u, 0xE3069283u, 0x8A9136AAu, 0xFFFFFFFFu}) {
    EXPECT_NE(mask_crc(crc), crc);
    EXPECT_EQ(unmask(mask_crc(crc)), crc);
  }
}

}  // namespace
}  // namespace ts
