// Embedding as a module: parameter name and shape, torch.nn.Embedding's
// initialization (N(0, 1), padding row zeroed), the lookup, the padding row's
// missing gradient through the module, and bad arguments.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "nn/embedding.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_throws;
using ::ts::testing::ref_of;

class SequenceLayersTest : public ts::testing::SeededTest {};

TEST_F(SequenceLayersTest, EmbeddingInitializesAsTorch) {
  manual_seed(seed());
  const Embedding embedding(200, 50, -3);
  EXPECT_EQ(embedding.padding_idx(), 197);
  const auto params = embedding.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[0].second.shape(), (Shape{200, 50}));
  const std::vector<double> w = ref_of(params[0].second.data()).v;
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < 200 * 50; ++i) {
    if (i / 50 == 197) {
      EXPECT_EQ(w[i], 0.0) << "padding row, column " << i % 50;
      continue;
    }
    sum += w[i];
    sum_sq += w[i] * w[i];
  }
  const double n = 199 * 50, mean = sum / n, stddev = std::sqrt(sum_sq / n - mean * mean);
  // 9950 draws of N(0, 1): the mean's standard error is 0.01.
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(stddev, 1.0, 0.05);
}

TEST_F(SequenceLayersTest, EmbeddingLooksUpRowsAndSkipsThePaddingGradient) {
  Embedding embedding(4, 2, 0);
  const Tensor ids = from_vector<int64_t>({3, 0, 3, 1}, {2, 2});
  const Variable out = embedding.forward(ids);
  ASSERT_EQ(out.shape(), (Shape{2, 2, 2}));
  const std::vector<double> w = ref_of(embedding.named_parameters()[0].second.data()).v;
  const std::vector<double> got = ref_of(out.data()).v;
  const int64_t rows[] = {3, 0, 3, 1};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got[2 * i], w[2 * rows[i]]);
    EXPECT_EQ(got[2 * i + 1], w[2 * rows[i] + 1]);
  }
  out.backward(ones(out.shape()));
  const std::vector<double> grad = ref_of(embedding.named_parameters()[0].second.grad()).v;
  EXPECT_EQ(grad, (std::vector<double>{0, 0, 1, 1, 0, 0, 2, 2}));
}

TEST_F(SequenceLayersTest, EmbeddingRejectsBadSizes) {
  expect_throws(absl::StatusCode::kInvalidArgument, {"Embedding(num_embeddings=0", "positive"},
                [] { Embedding(0, 4); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Embedding(num_embeddings=5", "padding_idx 5"},
                [] { Embedding(5, 4, 5); });
}

}  // namespace
}  // namespace ts::nn
