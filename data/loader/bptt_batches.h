// Truncated-BPTT batches of a language model's token stream, read in order
// as AWD-LSTM and MLBench's task 3a read them: the stream batchified into
// [B, n] rows (data/readers/lm_text.h), then windows of columns one after
// the other, window k starting where window k-1 ended. Each window's length
// is bptt, or with random_lengths MLBench's random draw (random_bptt_length)
// from a generator seeded by (seed, epoch), so every rank of a run and a
// resumed run draw the same lengths; the last window is cut short by the
// stream's end. AWD-LSTM's training loop (`while i < n - 2`) never takes a
// last window of one token; its evaluation does: skip_single_token_tail.
//
// A batch holds {input [T, B], target [T, B], start}: the window's tokens
// and the next tokens (time-major, i64, contiguous) and the window's first
// column as an i64 scalar. start == 0 marks an epoch's first window, where a
// model that carries its recurrent state from window to window starts over.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "data/loader/batch_source.h"
#include "tensor/tensor.h"

namespace ts::data {

struct BpttOptions {
  int64_t bptt = 70;
  bool random_lengths = false;
  int64_t min_length = 5;  // of a random length (AWD-LSTM's)
  uint64_t seed = 0;
  bool skip_single_token_tail = false;
};

class BpttBatches final : public BatchSource {
 public:
  // `batched`: i64 [B, n] with n >= 2, as batchify() makes it.
  static absl::StatusOr<std::unique_ptr<BpttBatches>> create(Tensor batched, BpttOptions options);

  absl::Status start_epoch(int64_t epoch, int64_t first_batch = 0) override;
  absl::StatusOr<std::optional<Batch>> next() override;
  int64_t num_batches() const override { return static_cast<int64_t>(starts_.size()); }

  // The current epoch's windows: first column and length of each.
  const std::vector<int64_t>& starts() const { return starts_; }
  const std::vector<int64_t>& lengths() const { return lengths_; }

 private:
  BpttBatches(Tensor batched, BpttOptions options) : batched_(std::move(batched)), options_(options) {}
  // The first column and length of each window of `epoch`.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> plan_epoch(int64_t epoch) const;

  Tensor batched_;
  BpttOptions options_;
  std::vector<int64_t> starts_, lengths_;
  int64_t next_ = 0;
  bool started_ = false;
};

}  // namespace ts::data
