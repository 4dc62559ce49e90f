#include "data/readers/cifar.h"

#include <string>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::gzip;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

class CifarTest : public ::ts::testing::SeededTest {
 protected:
  // n records of `kind` with random pixels and labels; remembers them.
  std::string records(CifarKind kind, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      if (kind == CifarKind::k100) {
        coarse_.push_back(rng()() % 20);
        out.push_back(static_cast<char>(coarse_.back()));
      }
      fine_.push_back(rng()() % cifar_num_classes(kind));
      out.push_back(static_cast<char>(fine_.back()));
      std::string image(kCifarImageBytes, '\0');
      for (char& p : image) p = static_cast<char>(rng()() & 0xff);
      pixels_ += image;
      out += image;
    }
    return out;
  }
  std::vector<int64_t> fine_, coarse_;
  std::string pixels_;
};

TEST_F(CifarTest, Cifar10RoundTripAcrossBatchFiles) {
  const std::string a = write_temp("data_batch_1.bin", records(CifarKind::k10, 3));
  const std::string b = write_temp("data_batch_2.bin.gz", gzip(records(CifarKind::k10, 2)));
  ASSERT_OK_AND_ASSIGN(auto dataset, CifarDataset::open({a, b}, CifarKind::k10));
  ASSERT_EQ(dataset->size(), 5);
  EXPECT_EQ(dataset->set().images.shape(), Shape({5, 3, 32, 32}));
  EXPECT_FALSE(dataset->set().coarse_labels.defined());
  const auto all = to_vector<uint8_t>(dataset->set().images);
  EXPECT_EQ(std::string(all.begin(), all.end()), pixels_);
  for (int64_t i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(Example ex, dataset->get(i));
    EXPECT_EQ(ex.fields[0].shape(), Shape({3, 32, 32}));
    const auto px = to_vector<uint8_t>(ex.fields[0]);
    EXPECT_EQ(std::string(px.begin(), px.end()), pixels_.substr(i * kCifarImageBytes, kCifarImageBytes));
    const int64_t label = item<int64_t>(ex.fields[1]);
    EXPECT_EQ(label, fine_[i]);
  }
  expect_error(dataset->get(-1).status(), absl::StatusCode::kOutOfRange, {"index -1"});
}

TEST_F(CifarTest, Cifar100FineAndCoarseLabels) {
  const std::string path = write_temp("train.bin", records(CifarKind::k100, 4));
  for (bool coarse : {false, true}) {
    ASSERT_OK_AND_ASSIGN(auto dataset, CifarDataset::open({path}, CifarKind::k100, coarse));
    const auto fine = to_vector<int64_t>(dataset->set().labels);
    const auto coarse_labels = to_vector<int64_t>(dataset->set().coarse_labels);
    EXPECT_EQ(fine, fine_);
    EXPECT_EQ(coarse_labels, coarse_);
    for (int64_t i = 0; i < 4; ++i) {
      ASSERT_OK_AND_ASSIGN(Example ex, dataset->get(i));
      const int64_t label = item<int64_t>(ex.fields[1]);
      EXPECT_EQ(label, coarse ? coarse_[i] : fine_[i]);
    }
  }
}

TEST_F(CifarTest, BrokenFilesAreErrorsNamingFileAndRecord) {
  const std::string good = records(CifarKind::k10, 2);
  expect_error(parse_cifar(good.substr(0, good.size() - 1), "b.bin", CifarKind::k10).status(),
               absl::StatusCode::kInvalidArgument, {"b.bin", "truncated CIFAR-10 record 1", "3073-byte record"});
  expect_error(parse_cifar(good, "b.bin", CifarKind::k100).status(), absl::StatusCode::kInvalidArgument,
               {"b.bin", "truncated CIFAR-100 record 1", "3074-byte"});
  expect_error(parse_cifar("", "b.bin", CifarKind::k10).status(), absl::StatusCode::kInvalidArgument,
               {"b.bin", "empty file"});
  std::string bad = good;
  bad[3073] = 10;
  expect_error(parse_cifar(bad, "b.bin", CifarKind::k10).status(), absl::StatusCode::kInvalidArgument,
               {"b.bin", "record 1 has label 10", "[0, 10)"});
  std::string bad100 = records(CifarKind::k100, 1);
  bad100[0] = 20;
  expect_error(parse_cifar(bad100, "c.bin", CifarKind::k100).status(), absl::StatusCode::kInvalidArgument,
               {"c.bin", "record 0 has coarse label 20"});
  bad100[0] = 1;
  bad100[1] = 100;
  expect_error(parse_cifar(bad100, "c.bin", CifarKind::k100).status(), absl::StatusCode::kInvalidArgument,
               {"c.bin", "record 0 has label 100", "[0, 100)"});

  const std::string ok = write_temp("ok.bin", good);
  const std::string cut = write_temp("cut.bin", good.substr(0, 4000));
  expect_error(CifarDataset::open({ok, cut}, CifarKind::k10).status(), absl::StatusCode::kInvalidArgument,
               {"cut.bin", "truncated CIFAR-10 record 1"});
  expect_error(CifarDataset::open({}, CifarKind::k10).status(), absl::StatusCode::kInvalidArgument, {"no batch files"});
  expect_error(CifarDataset::open({ok}, CifarKind::k10, true).status(), absl::StatusCode::kInvalidArgument,
               {"coarse labels exist only in CIFAR-100"});
  expect_error(CifarDataset::open({"/nonexistent/x.bin"}, CifarKind::k10).status(), absl::StatusCode::kNotFound,
               {"/nonexistent/x.bin"});
}

}  // namespace
}  // namespace ts::data
