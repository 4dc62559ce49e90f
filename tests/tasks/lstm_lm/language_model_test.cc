// The language-model task on a tiny AWD-LSTM over a synthetic token stream:
// ranks get disjoint rows of the stream and the same number of steps; a run
// stopped mid-epoch resumes to bit-identical parameters and report (the
// carried LSTM states travel in the checkpoint: without them the resumed
// window would start from zeros); evaluation reports perplexity as the
// exponential of the per-token loss, throughput counts tokens, and each
// step's lr follows its window's length; AR and TAR read the last output on
// either side of its dropout; on a GPU (its BPTT windows reach it
// through the trainer's device prefetcher) it trains as on the CPU.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/status_macros.h"
#include "data/readers/lm_text.h"
#include "data/synthetic/tokens.h"
#include "gtest/gtest.h"
#include "nn/losses.h"
#include "nn/models/awd_lstm.h"
#include "tasks/common/trainer.h"
#include "tasks/lstm_lm/language_model.h"
#include "tasks/lstm_lm/lm_data.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tasks/lstm_lm/lm_testing.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

using lm_testing::config;
using lm_testing::kVocabulary;
using lm_testing::parameters;
using lm_testing::recipe;
using lm_testing::run;

// The first window's input rows, batch-major: [B][T].
std::vector<std::vector<int64_t>> first_rows(data::BatchSource& source) {
  EXPECT_OK(source.start_epoch(0));
  absl::StatusOr<std::optional<data::Batch>> batch = source.next();
  EXPECT_OK(batch.status());
  const Tensor rows = contiguous((**batch).fields[0].transpose(0, 1));
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = 0; b < rows.size(0); ++b) out.push_back(to_vector<int64_t>(rows.select(0, b)));
  return out;
}

TEST(LanguageModelTest, RanksReadTheirOwnRowsAndTakeTheSameSteps) {
  TaskConfig c = config("ranks");
  c.MutableExtension(lstm_lm)->set_random_bptt(true);
  ASSERT_OK_AND_ASSIGN(const LmData rank0, open_lm_data(c, 0, 2));
  ASSERT_OK_AND_ASSIGN(const LmData rank1, open_lm_data(c, 1, 2));
  EXPECT_EQ(rank0.vocabulary, kVocabulary);
  ASSERT_OK(rank0.data.train_batches->start_epoch(1));
  ASSERT_OK(rank1.data.train_batches->start_epoch(1));
  EXPECT_EQ(rank0.data.train_batches->num_batches(), rank1.data.train_batches->num_batches());
  // The stream in 2 x 4 rows: rank r reads rows [4r, 4r + 4).
  data::SyntheticTokenOptions options;
  options.vocab_size = kVocabulary;
  options.seed = c.seed();
  ASSERT_OK_AND_ASSIGN(auto stream, data::SyntheticTokenStream::create(options));
  ASSERT_OK_AND_ASSIGN(const Tensor tokens, stream->tokens(0, 1200));
  ASSERT_OK_AND_ASSIGN(const Tensor all_rows, data::batchify(tokens, 8));
  const auto r0 = first_rows(*rank0.data.train_batches);
  const auto r1 = first_rows(*rank1.data.train_batches);
  for (int64_t b = 0; b < 4; ++b) {
    const int64_t t = static_cast<int64_t>(r0[b].size());
    EXPECT_EQ(r0[b], to_vector<int64_t>(contiguous(all_rows.select(0, b).narrow(0, 0, t))));
    EXPECT_EQ(r1[b], to_vector<int64_t>(contiguous(all_rows.select(0, 4 + b).narrow(0, 0, t))));
  }

  LstmLmConfig& lm = *c.MutableExtension(lstm_lm);
  // A bad field is named as the config spells it.
  const auto expect_refused = [&](const char* field, const std::function<void(LstmLmConfig&)>& set, const char* why) {
    TaskConfig bad = c;
    set(*bad.MutableExtension(lstm_lm));
    expect_error(open_lm_data(bad, 0, 2).status(), absl::StatusCode::kInvalidArgument,
                 {absl::StrCat("lstm_lm: ", field, " = "), why});
  };
  expect_refused(
      "eval_bptt", [](LstmLmConfig& l) { l.set_eval_bptt(0); }, "must be >= 1");
  expect_refused(
      "min_seq_len", [](LstmLmConfig& l) { l.set_min_seq_len(0); }, "must be >= 1");
  expect_refused(
      "eval_batch_size", [](LstmLmConfig& l) { l.set_eval_batch_size(-2); }, "must be >= 1");
  expect_refused(
      "vocab_min_count", [](LstmLmConfig& l) { l.set_vocab_min_count(0); }, "must be >= 1");
  expect_refused(
      "dropout_e", [](LstmLmConfig& l) { l.set_dropout_e(1); }, "must be in [0, 1)");
  expect_refused(
      "tar_beta", [](LstmLmConfig& l) { l.set_tar_beta(std::nan("")); }, "must be finite and >= 0");
  lm.set_synthetic_valid_tokens(5);
  expect_error(open_lm_data(c, 0, 2).status(), absl::StatusCode::kInvalidArgument,
               {"validation split's 5 tokens", "too few for 3 rows"});
  lm.set_synthetic_valid_tokens(300);
  c.set_synthetic(false);
  expect_error(open_lm_data(c, 0, 1).status(), absl::StatusCode::kInvalidArgument,
               {"synthetic_valid_tokens", "without --synthetic they are not used"});
  lm.clear_synthetic_vocabulary();
  lm.clear_synthetic_train_tokens();
  lm.clear_synthetic_valid_tokens();
  lm.set_dataset(LstmLmConfig::WIKITEXT2);
  expect_error(open_lm_data(c, 0, 1).status(), absl::StatusCode::kInvalidArgument, {"WIKITEXT2", "--data_path"});
  c.set_num_workers(2);
  expect_error(open_lm_data(c, 0, 1).status(), absl::StatusCode::kInvalidArgument,
               {"num_workers is not used", "without loader threads"});
}

// The validation split is read in eval_batch_size rows at any world size
// (3 here), shared out among the ranks: the summed perplexity is the same on
// 1, 2 and 3 ranks, and on 4, where one row is read by two ranks at half
// weight.
TEST(LanguageModelTest, ValidationPerplexityDoesNotDependOnTheWorldSize) {
  const TaskConfig c = config("validation");
  const auto perplexity = [&](int world_size) {
    double nll = 0, tokens = 0;
    for (int rank = 0; rank < world_size; ++rank) {
      auto r = recipe(c, rank, world_size);
      autograd::NoGradGuard no_grad;
      r->model()->eval();
      data::BatchSource& windows = *r->data().eval_batches;
      EXPECT_OK(windows.start_epoch(0));
      while (true) {
        absl::StatusOr<std::optional<data::Batch>> batch = windows.next();
        EXPECT_OK(batch.status());
        if (!batch.ok() || !batch->has_value()) break;
        const EvalSums sums = r->evaluate((**batch).fields);
        nll += item<double>(to(sums.at("nll"), DType::kF64));
        tokens += item<double>(sums.at("tokens"));
      }
    }
    EXPECT_EQ(tokens, 297);  // 300 tokens in 3 rows of 100: 99 targets each
    return std::exp(nll / tokens);
  };
  const double alone = perplexity(1);
  for (int world_size : {2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << world_size << " ranks");
    // f32: the LSTM's GEMMs add in an order that depends on the rows.
    EXPECT_NEAR(perplexity(world_size), alone, 1e-6 * alone);
  }
}

TEST(LanguageModelTest, StoppedMidEpochResumesBitIdentically) {
  TaskConfig whole = config("whole");
  whole.MutableExtension(lstm_lm)->set_random_bptt(true);
  whole.clear_checkpoint_dir();
  auto reference = recipe(whole);
  ASSERT_OK_AND_ASSIGN(const RunSummary done, run(whole, *reference));
  ASSERT_EQ(done.epochs_completed, 2);

  TaskConfig part = config("part");
  part.MutableExtension(lstm_lm)->set_random_bptt(true);
  ASSERT_OK_AND_ASSIGN(const LmData data, open_lm_data(part, 0, 1));
  ASSERT_OK(data.data.train_batches->start_epoch(0));
  part.set_max_steps(data.data.train_batches->num_batches() + 3);  // inside epoch 2
  auto first = recipe(part);
  ASSERT_OK_AND_ASSIGN(const RunSummary stopped, run(part, *first));
  ASSERT_EQ(stopped.epochs_completed, 1);
  part.set_max_steps(0);
  part.set_resume(true);
  auto second = recipe(part);
  ASSERT_OK_AND_ASSIGN(const RunSummary resumed, run(part, *second));
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.global_step, done.global_step);
  EXPECT_EQ(parameters(*second->model()), parameters(*reference->model()));
  EXPECT_EQ(resumed.last_metrics, done.last_metrics);
}

TEST(LanguageModelTest, PerplexityTokensAndTheWindowsLr) {
  TaskConfig c = config("report");
  c.clear_checkpoint_dir();
  c.MutableExtension(lstm_lm)->set_random_bptt(false);
  auto r = recipe(c);
  ASSERT_OK_AND_ASSIGN(const RunSummary done, run(c, *r));
  EXPECT_NEAR(done.last_metrics.at("perplexity"), std::exp(done.last_metrics.at("loss")), 1e-9);
  EXPECT_LT(done.last_metrics.at("perplexity"), kVocabulary) << "training learned nothing of the Markov chain";
  ASSERT_OK_AND_ASSIGN(const std::string text, read_file(join_path(c.output_dir(), "report.json")));
  ASSERT_OK_AND_ASSIGN(const Json report, parse_json(text));
  const Json& throughput = *report.find("throughput");
  EXPECT_EQ(throughput.find("unit")->as_string(), "tokens");
  // 1200 tokens in 4 rows of 300: 299 targets per row, all counted but the
  // warm-up step's 12 per row.
  EXPECT_EQ(throughput.find("samples")->as_int(), 2 * 4 * 299 - 4 * 12);
  EXPECT_TRUE(report.find("time_to_target")->find("minimize")->as_bool());

  const Tensor window = zeros({35, 4}, {DType::kI64});
  const Tensor batch[] = {window, window, scalar_tensor(0, {DType::kI64})};
  EXPECT_DOUBLE_EQ(r->lr_factor(batch), 35.0 / 12.0);
  EXPECT_EQ(r->samples_in(batch), 35 * 4);
}

// A window at column 0 starts an epoch: the states carried from the
// previous windows are dropped, so its loss is a fresh recipe's bit for bit;
// any other window continues from them.
TEST(LanguageModelTest, AWindowAtColumnZeroStartsFromZeroStates) {
  const TaskConfig c = config("reset");
  auto carried = recipe(c, 0, 1, /*dropouts=*/false);
  auto fresh = recipe(c, 0, 1, /*dropouts=*/false);
  Generator g(11);
  const Tensor tokens = to(uniform({9, 4}, 0, kVocabulary, {}, &g), DType::kI64);  // toward zero: 0..39
  const Tensor input = tokens.narrow(0, 0, 8), target = tokens.narrow(0, 1, 8);
  auto batch_at = [&](int64_t column) {
    return std::vector<Tensor>{input, target, scalar_tensor(column, {DType::kI64})};
  };
  const double first = to_vector<double>(to(fresh->evaluate(batch_at(0)).at("nll"), DType::kF64))[0];
  for (const int64_t column : {0, 8, 16}) (void)carried->evaluate(batch_at(column));
  const double continued = to_vector<double>(to(carried->evaluate(batch_at(24)).at("nll"), DType::kF64))[0];
  const double restarted = to_vector<double>(to(carried->evaluate(batch_at(0)).at("nll"), DType::kF64))[0];
  EXPECT_EQ(restarted, first);
  EXPECT_NE(continued, first) << "a window inside the epoch must see the carried states";
}

// The loss is AWD-LSTM's: cross entropy + AR on the last LSTM's output
// after its locked dropout + TAR on it before (awd-lstm-lm's main.py:
// outputs[-1] and raw_outputs[-1]). With only that dropout on, the mask is
// one per sequence and feature ([1, B, F], the same at every step), and the
// raw outputs are what eval mode gives. (The golden tests run with the
// dropouts off, where dropped and raw are one tensor and a swap of the two
// regularizers' inputs could not show.)
TEST(LanguageModelTest, TheRegularizersReadTheLastOutputOnEitherSideOfItsDropout) {
  const TaskConfig c = config("regularizers");
  ASSERT_OK_AND_ASSIGN(LmData data, open_lm_data(c, 0, 1));
  nn::models::AwdLstmOptions only_output_dropout;
  only_output_dropout.embedding_size = 6;
  only_output_dropout.hidden_size = 10;
  only_output_dropout.num_layers = 2;
  only_output_dropout.dropout = 0.5;
  only_output_dropout.dropout_h = only_output_dropout.dropout_i = only_output_dropout.dropout_e =
      only_output_dropout.weight_drop = 0;
  manual_seed(3);
  const auto model = std::make_shared<nn::models::AwdLstm>(data.vocabulary, only_output_dropout);
  LanguageModelRecipe r(std::move(data.data), model, {.bptt = 8, .ar_alpha = 2, .tar_beta = 1});
  Generator g(12);
  const Tensor tokens = to(uniform({9, 4}, 0, kVocabulary, {}, &g), DType::kI64);
  const Tensor input = tokens.narrow(0, 0, 8), target = tokens.narrow(0, 1, 8);
  const Tensor batch[] = {input, target, scalar_tensor(0, {DType::kI64})};

  manual_seed(21);
  const nn::models::AwdLstmOutput out = model->forward(input);
  manual_seed(21);  // the same masks again
  const double loss = to_vector<double>(to(r.loss(batch).data(), DType::kF64))[0];
  const Tensor dropped = to(out.dropped_output.data(), DType::kF64);
  const Tensor raw = to(out.raw_outputs.back().data(), DType::kF64);
  const Tensor change = raw.narrow(0, 1, 7) - raw.narrow(0, 0, 7);
  const double ce = to_vector<double>(to(nn::cross_entropy(out.logits, reshape(target, {-1})).data(), DType::kF64))[0];
  const double ar = 2 * item<double>(mean(dropped * dropped));
  const double tar = 1 * item<double>(mean(change * change));
  EXPECT_NEAR(loss, ce + ar + tar, 1e-5 * (ce + ar + tar));

  // dropped = raw * mask[b, f] / (1 - p), the mask the same at every step.
  const std::vector<double> d = to_vector<double>(dropped), h = to_vector<double>(raw);
  const int64_t steps = 8, features = raw.size(1) * raw.size(2);
  int zeros = 0;
  for (int64_t j = 0; j < features; ++j) {
    const bool kept = d[j] != 0;
    zeros += !kept;
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t at = t * features + j;
      ASSERT_NEAR(d[at], kept ? 2 * h[at] : 0, 1e-6) << "step " << t << ", batch and feature " << j;
    }
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, features);
  // The raw outputs carry no dropout: eval mode gives the same.
  model->eval();
  ts::testing::expect_equal(model->forward(input).raw_outputs.back().data(), ts::testing::ref_of(raw));
}

TEST(LanguageModelTest, CudaTrainsAsTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  TaskConfig c = config("cuda");
  c.clear_checkpoint_dir();
  c.set_epochs(1);
  c.set_max_steps(8);
  // Without dropouts, so that the two runs differ only in rounding.
  auto on_cpu = recipe(c, 0, 1, /*dropouts=*/false);
  ASSERT_OK_AND_ASSIGN(const RunSummary cpu, run(c, *on_cpu));
  c.set_output_dir(join_path(::testing::TempDir(), "cuda_out"));
  c.set_device("cuda");
  auto on_gpu = recipe(c, 0, 1, /*dropouts=*/false);
  ASSERT_OK_AND_ASSIGN(const RunSummary gpu, run(c, *on_gpu, Device::cuda(0)));
  EXPECT_EQ(gpu.global_step, cpu.global_step);
  ASSERT_TRUE(on_gpu->model()->named_parameters().front().second.data().device().is_cuda());
  // cuDNN's LSTM sums in another order than the CPU's: close, not equal.
  EXPECT_NEAR(gpu.last_loss, cpu.last_loss, 1e-4 * std::abs(cpu.last_loss));
  const std::vector<std::vector<double>> want = parameters(*on_cpu->model()), got = parameters(*on_gpu->model());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size());
    for (size_t j = 0; j < want[i].size(); ++j) EXPECT_NEAR(got[i][j], want[i][j], 1e-4) << "parameter " << i;
  }
}

}  // namespace
}  // namespace ts::tasks
