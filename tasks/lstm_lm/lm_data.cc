#include "tasks/lstm_lm/lm_data.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "data/loader/bptt_batches.h"
#include "data/readers/lm_text.h"
#include "data/synthetic/tokens.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"
#include "tensor/ops.h"
#include "tools/corpus/fortune_corpus.h"

namespace ts::tasks {
namespace {

struct Streams {
  Tensor train, valid;  // i64 [tokens]
  int64_t vocabulary = 0;
  std::string description;
};

absl::StatusOr<Streams> fortunes(const TaskConfig& config, const LstmLmConfig& lm) {
  corpus::FortuneCorpusOptions options;
  if (!config.data_path().empty()) options.fortune_dir = config.data_path();
  ASSIGN_OR_RETURN(const corpus::FortuneCorpus texts, corpus::make_fortune_corpus(options));
  ASSIGN_OR_RETURN(
      data::LmCorpus corpus,
      data::make_lm_corpus({options.fortune_dir + " (train split)", texts.splits[0]},
                           {options.fortune_dir + " (valid split)", texts.splits[1]},
                           {options.fortune_dir + " (test split)", texts.splits[2]}, lm.vocab_min_count()));
  return Streams{corpus.train, corpus.valid, corpus.vocab.size(), absl::StrCat("fortunes (", options.fortune_dir, ")")};
}

absl::StatusOr<Streams> wikitext2(const TaskConfig& config, const LstmLmConfig& lm) {
  if (config.data_path().empty()) {
    return absl::InvalidArgumentError("dataset WIKITEXT2 needs --data_path=DIR holding wiki.{train,valid,test}.tokens");
  }
  const std::string& dir = config.data_path();
  ASSIGN_OR_RETURN(data::LmCorpus corpus, data::load_lm_corpus(dir + "/wiki.train.tokens", dir + "/wiki.valid.tokens",
                                                               dir + "/wiki.test.tokens", lm.vocab_min_count()));
  return Streams{corpus.train, corpus.valid, corpus.vocab.size(), absl::StrCat("wikitext-2 (", dir, ")")};
}

absl::StatusOr<Streams> synthetic(const TaskConfig& config, const LstmLmConfig& lm) {
  data::SyntheticTokenOptions options;
  options.vocab_size = lm.synthetic_vocabulary();
  options.seed = config.seed();
  ASSIGN_OR_RETURN(const std::unique_ptr<data::SyntheticTokenStream> stream,
                   data::SyntheticTokenStream::create(options));
  ASSIGN_OR_RETURN(Tensor train, stream->tokens(0, lm.synthetic_train_tokens()));
  ASSIGN_OR_RETURN(Tensor valid, stream->tokens(lm.synthetic_train_tokens(), lm.synthetic_valid_tokens()));
  return Streams{train, valid, options.vocab_size, "synthetic Markov-chain tokens"};
}

// The stream batchified into `rows` rows, at least 2 tokens each.
absl::StatusOr<Tensor> rows_of(const Tensor& stream, int64_t rows, absl::string_view split, absl::string_view how) {
  if (stream.numel() < 2 * rows) {
    return absl::InvalidArgumentError(absl::StrCat("the ", split, " split's ", stream.numel(),
                                                   " tokens are too few for ", how, " (at least 2 tokens per row)"));
  }
  return data::batchify(stream, rows);
}

absl::StatusOr<std::shared_ptr<data::BatchSource>> windows_of(const Tensor& rows, data::BpttOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<data::BpttBatches> windows, data::BpttBatches::create(rows, options));
  return std::shared_ptr<data::BatchSource>(std::move(windows));
}

// Training: this rank's rows of the stream batchified into rows_per_rank *
// world_size rows, as BPTT windows.
absl::StatusOr<std::shared_ptr<data::BatchSource>> train_windows(const Tensor& stream, int64_t rows_per_rank, int rank,
                                                                 int world_size, data::BpttOptions options) {
  ASSIGN_OR_RETURN(const Tensor batched,
                   rows_of(stream, rows_per_rank * world_size, "train",
                           absl::StrCat(rows_per_rank, " rows on each of ", world_size, " ranks")));
  ASSIGN_OR_RETURN(Tensor mine,
                   capture([&] { return contiguous(batched.narrow(0, rank * rows_per_rank, rows_per_rank)); }));
  return windows_of(mine, options);
}

// Validation: the stream in `rows` rows whatever the world size, as the
// reference evaluates it on every worker, shared out row by row: rank r
// takes rows r, r + W, ...; with more ranks than rows, row r % rows, its sums
// weighted by one over the ranks that share it.
absl::Status add_validation_windows(const Tensor& stream, int64_t rows, int rank, int world_size,
                                    data::BpttOptions options, LmData& out) {
  ASSIGN_OR_RETURN(const Tensor batched, rows_of(stream, rows, "validation", absl::StrCat(rows, " rows")));
  std::vector<int64_t> mine;
  if (world_size <= rows) {
    for (int64_t row = rank; row < rows; row += world_size) mine.push_back(row);
  } else {
    mine.push_back(rank % rows);
    const int64_t sharing = world_size / rows + (rank % rows < world_size % rows ? 1 : 0);
    out.eval_weight = 1.0 / static_cast<double>(sharing);
  }
  ASSIGN_OR_RETURN(
      const Tensor picked, capture([&] {
        return contiguous(index_select(batched, 0, from_vector<int64_t>(mine, {static_cast<int64_t>(mine.size())})));
      }));
  ASSIGN_OR_RETURN(out.data.eval_batches, windows_of(picked, options));
  return absl::OkStatus();
}

// The task's own fields, named as the config spells them (the readers
// below would name their own parameters instead).
absl::Status check_fields(const LstmLmConfig& lm) {
  const std::pair<const char*, int64_t> at_least_one[] = {{"bptt", lm.bptt()},
                                                          {"min_seq_len", lm.min_seq_len()},
                                                          {"eval_bptt", lm.eval_bptt()},
                                                          {"eval_batch_size", lm.eval_batch_size()},
                                                          {"vocab_min_count", lm.vocab_min_count()},
                                                          {"embedding_size", lm.embedding_size()},
                                                          {"hidden_size", lm.hidden_size()},
                                                          {"num_layers", lm.num_layers()}};
  for (const auto& [field, value] : at_least_one) {
    if (value < 1) return absl::InvalidArgumentError(absl::StrCat("lstm_lm: ", field, " = ", value, " must be >= 1"));
  }
  const std::pair<const char*, double> probabilities[] = {{"dropout", lm.dropout()},
                                                          {"dropout_h", lm.dropout_h()},
                                                          {"dropout_i", lm.dropout_i()},
                                                          {"dropout_e", lm.dropout_e()},
                                                          {"weight_drop", lm.weight_drop()}};
  for (const auto& [field, p] : probabilities) {
    if (!(p >= 0 && p < 1)) {
      return absl::InvalidArgumentError(absl::StrCat("lstm_lm: ", field, " = ", p, " must be in [0, 1)"));
    }
  }
  const std::pair<const char*, double> weights[] = {{"ar_alpha", lm.ar_alpha()}, {"tar_beta", lm.tar_beta()}};
  for (const auto& [field, w] : weights) {
    if (!(std::isfinite(w) && w >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("lstm_lm: ", field, " = ", w, " must be finite and >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LmData> open_lm_data(const TaskConfig& config, int rank, int world_size) {
  const LstmLmConfig& lm = config.GetExtension(lstm_lm);
  RETURN_IF_ERROR(check_fields(lm));
  if (config.has_num_workers()) {
    return absl::InvalidArgumentError(
        "lstm_lm: num_workers is not used: the BPTT windows are cut from the token stream in the training loop, "
        "without loader threads");
  }
  if (!config.synthetic() &&
      (lm.has_synthetic_vocabulary() || lm.has_synthetic_train_tokens() || lm.has_synthetic_valid_tokens())) {
    return absl::InvalidArgumentError(
        "lstm_lm: synthetic_vocabulary, synthetic_train_tokens and synthetic_valid_tokens size the --synthetic "
        "token stream; without --synthetic they are not used");
  }
  absl::StatusOr<Streams> streams = config.synthetic()                        ? synthetic(config, lm)
                                    : lm.dataset() == LstmLmConfig::WIKITEXT2 ? wikitext2(config, lm)
                                                                              : fortunes(config, lm);
  RETURN_IF_ERROR(streams.status());
  LmData out;
  out.vocabulary = streams->vocabulary;
  data::BpttOptions training;
  training.bptt = lm.bptt();
  training.random_lengths = lm.random_bptt();
  training.min_length = lm.min_seq_len();
  training.seed = config.seed();
  training.skip_single_token_tail = true;
  ASSIGN_OR_RETURN(out.data.train_batches,
                   train_windows(streams->train, config.batch_size(), rank, world_size, training));
  data::BpttOptions validation;
  validation.bptt = lm.eval_bptt();
  RETURN_IF_ERROR(add_validation_windows(streams->valid, lm.eval_batch_size(), rank, world_size, validation, out));
  out.data.description = absl::StrCat(streams->description, ": ", streams->train.numel(), " train and ",
                                      streams->valid.numel(), " validation tokens, vocabulary ", out.vocabulary);
  return out;
}

}  // namespace ts::tasks
