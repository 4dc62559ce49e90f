// The sequence-model layers as modules: Embedding's parameter name and shape,
// torch.nn.Embedding's initialization (N(0, 1), padding row zeroed), the
// lookup, the padding row's missing gradient, word dropout; LockedDropout's
// one mask per sequence; the LSTM's weight drop; bad arguments.
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/lstm.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::ref_of;

class SequenceLayersTest : public ts::testing::SeededTest {};

TEST_F(SequenceLayersTest, EmbeddingInitializesAsTorch) {
  manual_seed(seed());
  const Embedding embedding(200, 50, {.padding_idx = -3});
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
  Embedding embedding(4, 2, {.padding_idx = 0});
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

// Weight drop masks weight_hh anew on every training forward: a fraction p
// of its entries gets no gradient, two forwards differ, and eval is the
// plain LSTM.
TEST_F(SequenceLayersTest, LstmWeightDropMasksTheRecurrentWeightsPerForward) {
  manual_seed(seed());
  LSTM plain(3, 10), dropped(3, 10, {.weight_drop = 0.3});
  plain.to(DType::kF64);
  dropped.to(DType::kF64);
  ASSERT_OK(dropped.load_state_dict(plain.state_dict()));
  const Variable x(random_tensor(rng(), {8, 4, 3}, DType::kF64));
  autograd::sum(dropped.forward(x).output).backward();
  int64_t zero_grads = 0;
  for (double g : ref_of(dropped.named_parameters()[1].second.grad()).v) zero_grads += g == 0 ? 1 : 0;
  // 400 entries at p = 0.3: 120 expected, standard deviation 9.2, so within
  // 6 of those (a false failure about once in 10^9 seeds); without weight
  // drop none of them has a zero gradient.
  EXPECT_NEAR(zero_grads, 120, 6 * std::sqrt(400 * 0.3 * 0.7));
  EXPECT_NE(ref_of(dropped.forward(x).output.data()).v, ref_of(dropped.forward(x).output.data()).v);
  dropped.eval();
  EXPECT_EQ(ref_of(dropped.forward(x).output.data()).v, ref_of(plain.forward(x).output.data()).v);
  expect_throws(absl::StatusCode::kInvalidArgument, {"weight_drop 1"}, [] { LSTM(3, 4, {.weight_drop = 1}); });
}

TEST_F(SequenceLayersTest, EmbeddingRejectsBadSizes) {
  expect_throws(absl::StatusCode::kInvalidArgument, {"Embedding(num_embeddings=0", "positive"},
                [] { Embedding(0, 4); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Embedding(num_embeddings=5", "padding_idx 5"},
                [] { Embedding(5, 4, {.padding_idx = 5}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Embedding(num_embeddings=5", "word_dropout 1"},
                [] { Embedding(5, 4, {.word_dropout = 1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"LockedDropout(p=1.5)"}, [] { LockedDropout(1.5); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"LockedDropout", "[T, B, ...]", "f32[4]"},
                [] { LockedDropout(0.5).forward(Variable(ones({4}))); });
}

// Embedding dropout drops whole words: a row of the table is zero at every
// position that looks it up, or scaled by 1 / (1 - p) at all of them, and
// its gradient follows the same mask. Eval looks up the table as it is.
TEST_F(SequenceLayersTest, EmbeddingWordDropoutDropsWholeRows) {
  manual_seed(seed());
  constexpr int64_t kWords = 400;
  Embedding embedding(kWords, 3, {.word_dropout = 0.25});
  embedding.to(DType::kF64);
  // Every word twice: positions i and i + kWords.
  std::vector<int64_t> ids(2 * kWords);
  for (int64_t i = 0; i < 2 * kWords; ++i) ids[i] = i % kWords;
  const Tensor id_tensor = from_vector<int64_t>(ids, {2 * kWords});
  const Variable out = embedding.forward(id_tensor);
  out.backward(ones(out.shape(), {DType::kF64}));
  const std::vector<double> w = ref_of(embedding.named_parameters()[0].second.data()).v;
  const std::vector<double> got = ref_of(out.data()).v;
  const std::vector<double> grad = ref_of(embedding.named_parameters()[0].second.grad()).v;
  int64_t dropped = 0;
  for (int64_t word = 0; word < kWords; ++word) {
    const bool kept = got[word * 3] != 0;
    dropped += kept ? 0 : 1;
    for (int64_t j = 0; j < 3; ++j) {
      const double want = kept ? w[word * 3 + j] / 0.75 : 0.0;
      EXPECT_DOUBLE_EQ(got[word * 3 + j], want) << "word " << word;
      EXPECT_DOUBLE_EQ(got[(kWords + word) * 3 + j], want) << "second occurrence of word " << word;
      EXPECT_DOUBLE_EQ(grad[word * 3 + j], kept ? 2 / 0.75 : 0.0) << "word " << word;
    }
  }
  // 400 draws at p = 0.25: 100 expected, standard deviation 8.7; within 6.
  EXPECT_NEAR(dropped, 100, 6 * std::sqrt(400 * 0.25 * 0.75));
  embedding.eval();
  const std::vector<double> looked_up = ref_of(embedding.forward(id_tensor).data()).v;
  for (int64_t i = 0; i < kWords * 3; ++i) ASSERT_EQ(looked_up[i], w[i]);
}

// One mask per sequence: every time step of a (batch, feature) position is
// kept and scaled, or zeroed, together.
TEST_F(SequenceLayersTest, LockedDropoutSharesItsMaskAcrossTime) {
  manual_seed(seed());
  for (const bool batch_first : {false, true}) {
    SCOPED_TRACE(batch_first ? "batch first" : "time major");
    constexpr int64_t kSteps = 6, kBatch = 20, kFeatures = 30;
    const Shape shape = batch_first ? Shape{kBatch, kSteps, kFeatures} : Shape{kSteps, kBatch, kFeatures};
    LockedDropout dropout(0.4, batch_first);
    const Tensor x = random_tensor(rng(), shape, DType::kF64, 0.5, 1.5);
    const Variable y = dropout.forward(Variable(x));
    const std::vector<double> xs = ref_of(x).v, ys = ref_of(y.data()).v;
    const auto at = [&](int64_t t, int64_t b, int64_t f) {
      return batch_first ? (b * kSteps + t) * kFeatures + f : (t * kBatch + b) * kFeatures + f;
    };
    int64_t dropped = 0;
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t f = 0; f < kFeatures; ++f) {
        const bool kept = ys[at(0, b, f)] != 0;
        dropped += kept ? 0 : 1;
        for (int64_t t = 0; t < kSteps; ++t) {
          EXPECT_DOUBLE_EQ(ys[at(t, b, f)], kept ? xs[at(t, b, f)] / 0.6 : 0.0) << "step " << t;
        }
      }
    }
    // 600 draws at p = 0.4: 240 expected, standard deviation 12; within 6.
    EXPECT_NEAR(dropped, 240, 6 * std::sqrt(600 * 0.4 * 0.6));
    dropout.eval();
    EXPECT_EQ(ref_of(dropout.forward(Variable(x)).data()).v, xs);
  }
}

}  // namespace
}  // namespace ts::nn
