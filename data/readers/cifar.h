// CIFAR-10 and CIFAR-100 binary batches (data_batch_*.bin, train.bin, ...):
// fixed-size records of label byte(s) then 3x32x32 pixel bytes, channel-major.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/dataset.h"
#include "tensor/tensor.h"

namespace ts::data {

enum class CifarKind {
  k10,   // record: 1 label byte (0..9) + 3072 pixel bytes
  k100,  // record: coarse label (0..19) + fine label (0..99) + 3072 pixel bytes
};

inline constexpr int64_t kCifarImageBytes = 3 * 32 * 32;
int64_t cifar_record_bytes(CifarKind kind);
int64_t cifar_num_classes(CifarKind kind, bool coarse = false);

// Images u8 [N, 3, 32, 32]; labels i64 [N] (the fine labels for CIFAR-100);
// coarse_labels i64 [N] for CIFAR-100, undefined for CIFAR-10.
struct CifarSet {
  Tensor images;
  Tensor labels;
  Tensor coarse_labels;
};

// Parses whole records; a partial record or an out-of-range label is an
// error naming `name` and the record.
absl::StatusOr<CifarSet> parse_cifar(absl::string_view bytes, absl::string_view name, CifarKind kind);

// get(i) gives {image u8 [3, 32, 32] (a copy), label i64 scalar}; the label is
// the fine one, or for CIFAR-100 the coarse one when asked.
class CifarDataset : public Dataset {
 public:
  CifarDataset(CifarSet set, bool coarse) : set_(std::move(set)), coarse_(coarse) {}

  // The batches in order, concatenated (e.g. data_batch_1.bin .. _5.bin);
  // plain or gzip'd.
  static absl::StatusOr<std::unique_ptr<CifarDataset>> open(const std::vector<std::string>& paths, CifarKind kind,
                                                            bool coarse_labels = false);

  int64_t size() const override { return set_.labels.numel(); }
  absl::StatusOr<Example> get(int64_t index) const override;
  const CifarSet& set() const { return set_; }

 private:
  CifarSet set_;
  bool coarse_;
};

}  // namespace ts::data
