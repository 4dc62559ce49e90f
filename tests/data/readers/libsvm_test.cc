#include "data/readers/libsvm.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::gzip;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

void expect_same(const CsrMatrix& a, const CsrMatrix& b) {
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col_idx, b.col_idx);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.num_features, b.num_features);
}

constexpr char kSample[] =
    "# a comment line\n"
    "+1 1:0.5 3:-2e-1 # trailing comment\n"
    "-1 qid:7 2:1.25\t4:3\r\n"
    "\n"
    "   \t\n"
    "1\n"
    "-1 10:+7";  // no final newline

TEST(LibsvmTest, ParsesCommentsQidCrlfAndNormalizesLabels) {
  ASSERT_OK_AND_ASSIGN(CsrMatrix m, parse_libsvm(kSample, "s.svm"));
  EXPECT_EQ(m.rows(), 4);
  EXPECT_EQ(m.num_features, 10);
  EXPECT_EQ(m.labels, (std::vector<float>{1, 0, 1, 0}));
  EXPECT_EQ(m.row_ptr, (std::vector<int64_t>{0, 2, 4, 4, 5}));
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{0, 2, 1, 3, 9}));
  EXPECT_EQ(m.values, (std::vector<float>{0.5f, -0.2f, 1.25f, 3.0f, 7.0f}));

  ASSERT_OK_AND_ASSIGN(CsrMatrix zero_one, parse_libsvm("0 1:1\n1 2:1\n", "z.svm"));
  EXPECT_EQ(zero_one.labels, (std::vector<float>{0, 1}));
  ASSERT_OK_AND_ASSIGN(CsrMatrix raw, parse_libsvm("3.5 1:1\n-2 2:1\n", "r.svm", {LibsvmLabels::kRaw}));
  EXPECT_EQ(raw.labels, (std::vector<float>{3.5f, -2.0f}));
  ASSERT_OK_AND_ASSIGN(CsrMatrix wide, parse_libsvm("1 2:1\n", "w.svm", {LibsvmLabels::kBinary, 5}));
  EXPECT_EQ(wide.num_features, 5);
}

TEST(LibsvmTest, SameResultWhateverTheChunkBoundaries) {
  ASSERT_OK_AND_ASSIGN(CsrMatrix whole, parse_libsvm(kSample, "s.svm"));
  const absl::string_view text = kSample;
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= text.size(); cut2 += 7) {
      LibsvmParser parser("s.svm");
      ASSERT_OK(parser.feed(text.substr(0, cut)));
      ASSERT_OK(parser.feed(text.substr(cut, cut2 - cut)));
      ASSERT_OK(parser.feed(text.substr(cut2)));
      ASSERT_OK_AND_ASSIGN(CsrMatrix pieces, parser.finish());
      expect_same(pieces, whole);
    }
  }
}

TEST(LibsvmTest, ErrorsGiveFileLineAndColumn) {
  struct Case {
    const char* text;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"1 1:1\nx 2:1\n", {"e.svm:2:1:", "expected a finite numeric label"}},
      {"1 1:1\n2 2:1\n", {"e.svm:2:1:", "label 2 is not binary"}},
      {"1 1:1\n-1 2:1\n0 3:1\n", {"e.svm:3:1:", "labels mix -1 and 0"}},
      {"1 0:1\n", {"e.svm:1:3:", "feature index 0 is not 1-based"}},
      {"1 3:1 2:1\n", {"e.svm:1:7:", "feature index 2 does not follow 3"}},
      {"1 3:1 3:1\n", {"e.svm:1:7:", "does not follow 3"}},
      {"1 1:1 2\n", {"e.svm:1:7:", "expected <index>:<value>"}},
      {"1 1:1 a:2\n", {"e.svm:1:7:", "expected <index>:<value>"}},
      {"1 1:abc\n", {"e.svm:1:5:", "expected a finite f32 feature value"}},
      {"1 1:nan\n", {"e.svm:1:5:", "finite"}},
      {"1 1:1e300\n", {"e.svm:1:5:", "finite"}},
      {"1 1:1x\n", {"e.svm:1:5:", "feature value"}},
      {"1 1:\n", {"e.svm:1:5:", "feature value"}},
      {"1 qid:x 1:1\n", {"e.svm:1:3:", "bad qid"}},
      {"1x 1:1\n", {"e.svm:1:1:", "label"}},
      {"1 3000000000:1\n", {"e.svm:1:3:", "exceeds"}},
      {"", {"e.svm", "no examples"}},
      {"# only a comment\n\n", {"e.svm", "no examples"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    expect_error(parse_libsvm(c.text, "e.svm").status(), absl::StatusCode::kInvalidArgument, c.fragments);
  }
  expect_error(parse_libsvm("1 6:1\n", "e.svm", {LibsvmLabels::kBinary, 5}).status(),
               absl::StatusCode::kInvalidArgument, {"e.svm:1:3:", "feature index 6 exceeds the 5 features"});
  expect_error(parse_libsvm("nan 1:1\n", "e.svm", {LibsvmLabels::kRaw}).status(), absl::StatusCode::kInvalidArgument,
               {"e.svm:1:1:", "label"});
  // The line count runs across chunks.
  LibsvmParser parser("p.svm");
  ASSERT_OK(parser.feed("1 1:1\n1 2"));
  expect_error(parser.feed(":1\n1 1:1\n1 x\n"), absl::StatusCode::kInvalidArgument, {"p.svm:4:3:"});
}

class LibsvmRandomTest : public ::ts::testing::SeededTest {};

TEST_F(LibsvmRandomTest, RandomMatricesRoundTripThroughPlainAndGzipFiles) {
  std::mt19937_64& rng = this->rng();
  std::uniform_real_distribution<float> value(-10, 10);
  CsrMatrix expected;
  std::string text;
  for (int r = 0; r < 300; ++r) {
    const bool positive = rng() % 2;
    expected.labels.push_back(positive ? 1 : 0);
    text += positive ? "+1" : "-1";
    for (int c = 0; c < 50; ++c) {
      if (rng() % 3 != 0) continue;
      const float v = value(rng);
      expected.col_idx.push_back(c);
      expected.values.push_back(v);
      // %.9g round-trips every float exactly.
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, " %d:%.9g", c + 1, v);
      text += buffer;
      expected.num_features = std::max<int64_t>(expected.num_features, c + 1);
    }
    expected.row_ptr.push_back(expected.col_idx.size());
    text += '\n';
  }
  for (bool gz : {false, true}) {
    const std::string path = write_temp(gz ? "r.svm.gz" : "r.svm", gz ? gzip(text) : text);
    ASSERT_OK_AND_ASSIGN(CsrMatrix m, read_libsvm(path));
    expect_same(m, expected);
  }
}

TEST(LibsvmTest, FileErrorsNameThePath) {
  const std::string path = write_temp("bad.svm", "1 1:1\n1 1:1 1:2\n");
  expect_error(read_libsvm(path).status(), absl::StatusCode::kInvalidArgument, {path + ":2:7:"});
  expect_error(read_libsvm(write_temp("empty.svm", "")).status(), absl::StatusCode::kInvalidArgument,
               {"empty.svm", "no examples"});
  expect_error(LibsvmDataset::open("/nonexistent/a.svm").status(), absl::StatusCode::kNotFound, {"/nonexistent/a.svm"});
}

TEST(LibsvmTest, DenseViewAndDataset) {
  const std::string path = write_temp("d.svm", "1 1:1 3:3\n-1 2:-2\n");
  ASSERT_OK_AND_ASSIGN(auto dataset, LibsvmDataset::open(path));
  ASSERT_OK_AND_ASSIGN(Tensor dense, to_dense(dataset->matrix()));
  EXPECT_EQ(dense.shape(), Shape({2, 3}));
  const auto values = to_vector<float>(dense);
  EXPECT_EQ(values, (std::vector<float>{1, 0, 3, 0, -2, 0}));
  expect_error(to_dense(dataset->matrix(), 2).status(), absl::StatusCode::kInvalidArgument,
               {"to_dense", "3 features exceed", "limit of 2"});

  ASSERT_EQ(dataset->size(), 2);
  ASSERT_OK_AND_ASSIGN(Example second, dataset->get(1));
  const auto row = to_vector<float>(second.fields[0]);
  EXPECT_EQ(row, (std::vector<float>{0, -2, 0}));
  EXPECT_EQ(second.fields[1].dtype(), DType::kI64);
  const int64_t label = item<int64_t>(second.fields[1]);
  EXPECT_EQ(label, 0);
  expect_error(dataset->get(2).status(), absl::StatusCode::kOutOfRange, {"index 2"});

  ASSERT_OK_AND_ASSIGN(auto raw, LibsvmDataset::open(write_temp("raw.svm", "2.5 1:1\n"), {LibsvmLabels::kRaw}));
  ASSERT_OK_AND_ASSIGN(Example ex, raw->get(0));
  EXPECT_EQ(ex.fields[1].dtype(), DType::kF32);
  const float raw_label = item<float>(ex.fields[1]);
  EXPECT_EQ(raw_label, 2.5f);
}

}  // namespace
}  // namespace ts::data
