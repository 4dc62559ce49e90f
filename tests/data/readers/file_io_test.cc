#include "data/readers/file_io.h"

#include <string>

#include "base/files.h"
#include "gtest/gtest.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::gzip;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

class FileIoTest : public ::ts::testing::SeededTest {
 protected:
  std::string random_bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng()() % 7);  // compressible
    return s;
  }
};

TEST_F(FileIoTest, ReadsPlainGzipAndConcatenatedGzip) {
  const std::string a = random_bytes(300000), b = random_bytes(1000);
  ASSERT_OK_AND_ASSIGN(std::string plain, read_inflated(write_temp("a", a)));
  EXPECT_EQ(plain, a);
  ASSERT_OK_AND_ASSIGN(std::string inflated, read_inflated(write_temp("a.gz", gzip(a))));
  EXPECT_EQ(inflated, a);
  ASSERT_OK_AND_ASSIGN(std::string both, read_inflated(write_temp("ab.gz", gzip(a) + gzip(b))));
  EXPECT_EQ(both, a + b);
  ASSERT_OK_AND_ASSIGN(std::string empty, read_inflated(write_temp("empty", "")));
  EXPECT_EQ(empty, "");
}

// As GNU gzip and CPython's gzip read it: zeros after a member are padding,
// and a member after the padding is still read.
TEST_F(FileIoTest, ZeroPaddingAfterAGzipMemberIsSkipped) {
  const std::string a = random_bytes(3000), b = random_bytes(500);
  const std::string zeros(16, '\0');
  ASSERT_OK_AND_ASSIGN(std::string padded, read_inflated(write_temp("padded.gz", gzip(a) + zeros)));
  EXPECT_EQ(padded, a);
  ASSERT_OK_AND_ASSIGN(std::string between, gunzip(gzip(a) + zeros + gzip(b) + zeros, "between.gz"));
  EXPECT_EQ(between, a + b);
  expect_error(gunzip(gzip(a) + zeros + "junk", "junk.gz").status(), absl::StatusCode::kDataLoss,
               {"junk.gz", "corrupt gzip"});
}

TEST_F(FileIoTest, GzipErrorsNameTheFile) {
  const std::string z = gzip(random_bytes(5000));
  expect_error(gunzip(z.substr(0, z.size() / 2), "half.gz").status(), absl::StatusCode::kDataLoss,
               {"half.gz", "truncated"});
  std::string corrupt = z;
  corrupt[3] = static_cast<char>(0xff);  // reserved flag bits
  expect_error(gunzip(corrupt, "bad.gz").status(), absl::StatusCode::kDataLoss, {"bad.gz", "corrupt gzip"});
  expect_error(gunzip(z + "junk", "tail.gz").status(), absl::StatusCode::kDataLoss, {"tail.gz", "corrupt gzip"});
  expect_error(gunzip(z, "big.gz", 1000).status(), absl::StatusCode::kResourceExhausted,
               {"big.gz", "more than 1000 bytes"});
  expect_error(read_inflated("/nonexistent/file").status(), absl::StatusCode::kNotFound,
               {"/nonexistent/file", "cannot open"});
  expect_error(write_file_atomically("/nonexistent/dir/file", "x"), absl::StatusCode::kNotFound,
               {"/nonexistent/dir/file"});
}

TEST_F(FileIoTest, ChunkReaderStreamsPlainAndGzip) {
  const std::string a = random_bytes(100000);
  for (const std::string& path : {write_temp("c", a), write_temp("c.gz", gzip(a))}) {
    ASSERT_OK_AND_ASSIGN(auto reader, ChunkReader::open(path));
    std::string out;
    int64_t n;
    int chunks = 0;
    do {
      ASSERT_OK_AND_ASSIGN(n, reader->read(out, 7000));
      ++chunks;
    } while (n > 0);
    EXPECT_EQ(out, a);
    EXPECT_GE(chunks, 15);
  }
  const std::string z = gzip(a);
  ASSERT_OK_AND_ASSIGN(auto cut, ChunkReader::open(write_temp("cut.gz", z.substr(0, z.size() - 100))));
  std::string out;
  absl::Status status;
  while (true) {
    auto n = cut->read(out, 1 << 16);
    if (!n.ok()) {
      status = n.status();
      break;
    }
    if (*n == 0) break;
  }
  expect_error(status, absl::StatusCode::kDataLoss, {"cut.gz", "read failed"});
  expect_error(ChunkReader::open("/nonexistent/c").status(), absl::StatusCode::kNotFound, {"/nonexistent/c"});
}

}  // namespace
}  // namespace ts::data
