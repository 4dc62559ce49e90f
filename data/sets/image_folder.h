// A folder of images in torchvision's ImageFolder layout, the layout of
// ImageNet's train/ and val/ splits: DIR/<class>/**/*.{jpg,jpeg,png} (names
// ending so in any case). Classes are the subfolders sorted by name,
// labelled 0, 1, ... in that order; files are listed as os.walk visits them,
// folder by sorted folder, sorted by name within each (torchvision's order).
// Index i is the same image here and in torchvision's ImageFolder when both
// list the same files, which holds unless the folder has what only
// torchvision lists: names ending in its other IMG_EXTENSIONS (.ppm, .bmp,
// .pgm, .tif, .tiff, .webp: formats we do not decode), or entries with an
// image name that are not regular files (a broken link, say) - each shifts
// the indices after it - and as long as names are UTF-8, whose byte order is
// Python's code-point order. A file's format is told by its content, not
// its name: ImageNet's one PNG named .JPEG decodes as torchvision's loader
// decodes it. Images are read and decoded in get(), on the loader's worker
// threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "data/transforms/jpeg_pipeline.h"

namespace ts::data {

struct ImageFolderOptions {
  // What a file's bytes become: decoded u8 [3, H, W] by default, or a fused
  // decode-crop-normalize (transforms::train_pipeline / eval_pipeline).
  transforms::JpegPipeline pipeline = transforms::decode_pipeline();
  // A file that does not decode (corrupt, truncated, neither a JPEG nor a
  // PNG: kDataLoss) or that needs more memory to decode than there is (a
  // header claiming a huge image: kResourceExhausted): an error naming it
  // (false), or skipped (true): get(i) then gives the first image from i on
  // (wrapping around) that decodes, the same one every time, and
  // corrupt_files() counts the files found so. Files that cannot be read at
  // all are errors either way.
  bool skip_corrupt = false;
};

class ImageFolder : public Dataset {
 public:
  // Lists `dir` (a split: ROOT/train). Errors name the folder: missing, no
  // class subfolders, or a class without image files.
  static absl::StatusOr<std::unique_ptr<ImageFolder>> open(const std::string& dir, ImageFolderOptions options = {});

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  // {image, label i64 scalar}; the pipeline's random choices come from the
  // stream of sample `index` in epoch 0 under seed 0.
  absl::StatusOr<Example> get(int64_t index) const override;
  absl::StatusOr<Example> get_augmented(int64_t index, RandomStream& rng) const override;

  const std::vector<std::string>& classes() const { return classes_; }
  const std::string& path(int64_t index) const { return files_[index].path; }
  int64_t label(int64_t index) const { return files_[index].label; }
  // Files that failed to decode so far (skip_corrupt), each counted once.
  int64_t corrupt_files() const { return corrupt_count_.load(std::memory_order_relaxed); }

 private:
  struct File {
    std::string path;
    int64_t label;
  };
  ImageFolder(std::string dir, std::vector<std::string> classes, std::vector<File> files, ImageFolderOptions options);
  absl::StatusOr<Example> load(int64_t index, RandomStream& rng) const;

  std::string dir_;
  std::vector<std::string> classes_;
  std::vector<File> files_;
  ImageFolderOptions options_;
  // One flag per file, set when it is first found corrupt.
  std::unique_ptr<std::atomic<bool>[]> corrupt_;
  mutable std::atomic<int64_t> corrupt_count_{0};
};

}  // namespace ts::data
