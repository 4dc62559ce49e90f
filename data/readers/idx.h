// IDX files (the MNIST / Fashion-MNIST format: a big-endian header of magic
// and dims, then the elements) and the image+label Dataset built on them.
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

// Element type codes of the IDX format (third byte of the magic number).
enum class IdxType : uint8_t { kU8 = 0x08, kI8 = 0x09, kI16 = 0x0B, kI32 = 0x0C, kF32 = 0x0D, kF64 = 0x0E };

// A parsed IDX header; `data` views the element bytes (big-endian) inside the
// input, so the input must outlive it.
struct IdxArray {
  IdxType type = IdxType::kU8;
  std::vector<int64_t> dims;
  absl::string_view data;
};

// Checks the magic (two zero bytes, a known type, a rank of 1 to 8), the dims
// and that the file size is exactly header + elements. `name` (the file)
// starts every error message.
absl::StatusOr<IdxArray> parse_idx(absl::string_view bytes, absl::string_view name);

// Images u8 [N, 1, H, W] and labels i64 [N] with values in [0, num_classes).
struct IdxImageSet {
  Tensor images;
  Tensor labels;
};

// From the bytes of an images file (magic 0x00000803: u8, rank 3) and a
// labels file (magic 0x00000801: u8, rank 1) with equal counts.
absl::StatusOr<IdxImageSet> parse_idx_image_set(absl::string_view image_bytes, absl::string_view image_name,
                                                absl::string_view label_bytes, absl::string_view label_name,
                                                int64_t num_classes = 10);

// Random access to an IDX image set held in memory. get(i) gives
// {image u8 [1, H, W] (a copy), label i64 scalar}.
class IdxImageDataset : public Dataset {
 public:
  explicit IdxImageDataset(IdxImageSet set) : set_(std::move(set)) {}

  // Either file may be gzip'd.
  static absl::StatusOr<std::unique_ptr<IdxImageDataset>> open(const std::string& images_path,
                                                               const std::string& labels_path,
                                                               int64_t num_classes = 10);

  int64_t size() const override { return set_.labels.numel(); }
  absl::StatusOr<Example> get(int64_t index) const override;

  const Tensor& images() const { return set_.images; }  // u8 [N, 1, H, W]
  const Tensor& labels() const { return set_.labels; }  // i64 [N]

 private:
  IdxImageSet set_;
};

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// A split of MNIST or Fashion-MNIST from `dir`, by the original file names
// ({train,t10k}-{images-idx3,labels-idx1}-ubyte, with or without .gz).
absl::StatusOr<std::unique_ptr<IdxImageDataset>> open_mnist(const std::string& dir, bool train);

}  // namespace ts::data
