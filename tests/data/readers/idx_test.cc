#include "data/readers/idx.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/fashion_mnist_testing.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::gzip;
using ::ts::data::testing::idx_bytes;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

class IdxTest : public ::ts::testing::SeededTest {
 protected:
  // n random images of h x w and labels in [0, 10).
  void make(uint32_t n, uint32_t h, uint32_t w) {
    pixels_.resize(n * h * w);
    labels_.resize(n);
    for (char& p : pixels_) p = static_cast<char>(rng()() & 0xff);
    for (char& l : labels_) l = static_cast<char>(rng()() % 10);
    images_file_ = idx_bytes(0x08, {n, h, w}, pixels_);
    labels_file_ = idx_bytes(0x08, {n}, labels_);
  }
  std::string pixels_, labels_, images_file_, labels_file_;
};

TEST_F(IdxTest, ParsesHeaderOfEveryType) {
  const std::pair<IdxType, int> types[] = {{IdxType::kU8, 1},  {IdxType::kI8, 1},  {IdxType::kI16, 2},
                                           {IdxType::kI32, 4}, {IdxType::kF32, 4}, {IdxType::kF64, 8}};
  for (const auto& [type, size] : types) {
    SCOPED_TRACE(static_cast<int>(type));
    const std::string data(2 * 3 * size, '\x01');
    const std::string file = idx_bytes(static_cast<uint8_t>(type), {2, 3}, data);  // outlives the views into it
    ASSERT_OK_AND_ASSIGN(IdxArray a, parse_idx(file, "f"));
    EXPECT_EQ(a.type, type);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.data, data);
    // One element short is an error: the element size is the type's.
    EXPECT_FALSE(parse_idx(file.substr(0, file.size() - size), "f").ok());
  }
  ASSERT_OK_AND_ASSIGN(IdxArray e, parse_idx(idx_bytes(0x0E, {0, 7}, ""), "f"));
  EXPECT_EQ(e.dims, (std::vector<int64_t>{0, 7}));
}

TEST_F(IdxTest, RoundTripThroughFilesPlainAndGzip) {
  make(5, 4, 3);
  for (bool gz : {false, true}) {
    SCOPED_TRACE(gz ? "gzip" : "plain");
    const std::string images = write_temp(gz ? "im.gz" : "im", gz ? gzip(images_file_) : images_file_);
    const std::string labels = write_temp(gz ? "lb.gz" : "lb", gz ? gzip(labels_file_) : labels_file_);
    ASSERT_OK_AND_ASSIGN(auto dataset, IdxImageDataset::open(images, labels));
    ASSERT_EQ(dataset->size(), 5);
    EXPECT_EQ(dataset->images().shape(), Shape({5, 1, 4, 3}));
    EXPECT_EQ(dataset->images().dtype(), DType::kU8);
    const auto all = to_vector<uint8_t>(dataset->images());
    EXPECT_EQ(std::string(all.begin(), all.end()), pixels_);
    for (int64_t i = 0; i < 5; ++i) {
      ASSERT_OK_AND_ASSIGN(Example ex, dataset->get(i));
      ASSERT_EQ(ex.fields.size(), 2u);
      EXPECT_EQ(ex.fields[0].shape(), Shape({1, 4, 3}));
      const auto px = to_vector<uint8_t>(ex.fields[0]);
      EXPECT_EQ(std::string(px.begin(), px.end()), pixels_.substr(i * 12, 12));
      EXPECT_EQ(ex.fields[1].dim(), 0);
      EXPECT_EQ(ex.fields[1].dtype(), DType::kI64);
      const int64_t label = item<int64_t>(ex.fields[1]);
      EXPECT_EQ(label, labels_[i]);
      // A copy: writing it leaves the dataset unchanged.
      fill_(ex.fields[0], 0);
    }
    const auto again = to_vector<uint8_t>(dataset->images());
    EXPECT_EQ(std::string(again.begin(), again.end()), pixels_);
    expect_error(dataset->get(5).status(), absl::StatusCode::kOutOfRange, {"index 5", "[0, 5)"});
  }
}

TEST_F(IdxTest, BadHeadersAreErrorsNamingTheFile) {
  expect_error(parse_idx("", "x.idx").status(), absl::StatusCode::kInvalidArgument, {"x.idx", "empty file"});
  expect_error(parse_idx(std::string("\0\0\x08", 3), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "truncated IDX header"});
  expect_error(parse_idx(idx_bytes(0x07, {1}, "a"), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "bad IDX magic number 0x00000701"});
  expect_error(parse_idx(std::string("\x01\0\x08\x01\0\0\0\x01"
                                     "a",
                                     9),
                         "x.idx")
                   .status(),
               absl::StatusCode::kInvalidArgument, {"x.idx", "bad IDX magic"});
  expect_error(parse_idx(idx_bytes(0x08, {}, ""), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "bad IDX magic number 0x00000800"});
  // Rank 3 announced, one dim present.
  expect_error(parse_idx(std::string("\0\0\x08\x03\0\0\0\x01", 8), "x.idx").status(),
               absl::StatusCode::kInvalidArgument, {"x.idx", "truncated IDX header", "3 dims need 16 bytes"});
  expect_error(parse_idx(idx_bytes(0x08, {2, 3}, "12345"), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "truncated", "dims [2, 3]"});
  expect_error(parse_idx(idx_bytes(0x0D, {2}, "1234567"), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "truncated", "dims [2]"});
  expect_error(parse_idx(idx_bytes(0x08, {2, 3}, "1234567"), "x.idx").status(), absl::StatusCode::kInvalidArgument,
               {"x.idx", "1 trailing bytes", "dims [2, 3]"});
  // Dims whose product overflows 64 bits are "truncated", not a crash.
  expect_error(parse_idx(idx_bytes(0x0E, {0xffffffff, 0xffffffff, 0xffffffff}, "12345678"), "x.idx").status(),
               absl::StatusCode::kInvalidArgument, {"x.idx", "truncated"});
}

TEST_F(IdxTest, ImageSetChecksMagicCountsAndLabels) {
  make(4, 2, 2);
  expect_error(parse_idx_image_set(labels_file_, "im", labels_file_, "lb").status(), absl::StatusCode::kInvalidArgument,
               {"im", "magic 0x00000801", "not an IDX images file", "0x00000803"});
  expect_error(parse_idx_image_set(images_file_, "im", images_file_, "lb").status(), absl::StatusCode::kInvalidArgument,
               {"lb", "magic 0x00000803", "not an IDX labels file", "0x00000801"});
  const std::string three_labels = idx_bytes(0x08, {3}, labels_.substr(0, 3));
  expect_error(parse_idx_image_set(images_file_, "im", three_labels, "lb").status(), absl::StatusCode::kInvalidArgument,
               {"lb", "3 labels", "im", "4 images"});
  const std::string bad_label = idx_bytes(0x08, {4}, std::string("\x01\x02\x0a\x03", 4));
  expect_error(parse_idx_image_set(images_file_, "im", bad_label, "lb").status(), absl::StatusCode::kInvalidArgument,
               {"lb", "label 10 of example 2", "[0, 10)"});
  ASSERT_OK(parse_idx_image_set(images_file_, "im", bad_label, "lb", 11).status());
}

TEST_F(IdxTest, FileErrorsNameTheFile) {
  make(3, 2, 2);
  const std::string labels = write_temp("good-labels", labels_file_);
  expect_error(IdxImageDataset::open(write_temp("empty", ""), labels).status(), absl::StatusCode::kInvalidArgument,
               {"empty", "empty file"});
  expect_error(IdxImageDataset::open(write_temp("cut", images_file_.substr(0, 20)), labels).status(),
               absl::StatusCode::kInvalidArgument, {"/cut", "truncated"});
  expect_error(IdxImageDataset::open(write_temp("cut.gz", gzip(images_file_).substr(0, 30)), labels).status(),
               absl::StatusCode::kDataLoss, {"cut.gz", "gzip"});
  expect_error(IdxImageDataset::open("/nonexistent/images", labels).status(), absl::StatusCode::kNotFound,
               {"/nonexistent/images", "cannot open"});
  expect_error(open_mnist("/nonexistent", true).status(), absl::StatusCode::kNotFound,
               {"/nonexistent/train-images-idx3-ubyte.gz"});
}

TEST_F(IdxTest, FashionMnistFromDebianPackage) {
  TS_SKIP_WITHOUT_FASHION_MNIST();
  for (auto [train, count] : {std::pair{true, 60000}, std::pair{false, 10000}}) {
    ASSERT_OK_AND_ASSIGN(auto set, open_mnist(kFashionMnistDir, train));
    EXPECT_EQ(set->size(), count);
    EXPECT_EQ(set->images().shape(), Shape({count, 1, 28, 28}));
    const auto labels = to_vector<int64_t>(set->labels());
    std::vector<int64_t> per_class(10, 0);
    for (int64_t l : labels) {
      ASSERT_GE(l, 0);
      ASSERT_LT(l, 10);
      ++per_class[l];
    }
    // Fashion-MNIST is balanced: 6000 (train) or 1000 (test) per class.
    for (int64_t c : per_class) EXPECT_EQ(c, count / 10);
  }
}

}  // namespace
}  // namespace ts::data
