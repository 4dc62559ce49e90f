#include "data/sets/image_folder.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/status_macros.h"

namespace ts::data {
namespace fs = std::filesystem;
namespace {

// The names torchvision's has_file_allowed_extension takes, of the formats
// we decode: the name, lowercased, ends with one (so ".png" alone counts).
bool is_image_name(const fs::path& path) {
  const std::string name = absl::AsciiStrToLower(path.filename().string());
  return absl::EndsWith(name, ".jpg") || absl::EndsWith(name, ".jpeg") || absl::EndsWith(name, ".png");
}

// A file skip_corrupt passes over: its content does not decode (kDataLoss),
// or decoding it needs more memory than there is (kResourceExhausted: a
// header claiming a huge image), which a training run cannot use either.
bool unusable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDataLoss || status.code() == absl::StatusCode::kResourceExhausted;
}

absl::Status listing_error(const fs::path& dir, const std::error_code& ec) {
  return absl::NotFoundError(absl::StrCat(dir.string(), ": cannot list: ", ec.message()));
}

// The image files under a class folder in os.walk's order as torchvision
// sorts it: by folder path, then by name (symbolic links followed; entries
// that are not regular files there, such as a broken link, are left out).
absl::StatusOr<std::vector<std::string>> list_images(const fs::path& class_dir) {
  std::vector<std::pair<std::string, std::string>> found;  // folder, name
  std::error_code ec;
  fs::recursive_directory_iterator it(class_dir, fs::directory_options::follow_directory_symlink, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && is_image_name(it->path())) {
      found.emplace_back(it->path().parent_path().string(), it->path().filename().string());
    }
  }
  if (ec) return listing_error(class_dir, ec);
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  paths.reserve(found.size());
  for (const auto& [folder, name] : found) paths.push_back(join_path(folder, name));
  return paths;
}

}  // namespace

ImageFolder::ImageFolder(std::string dir, std::vector<std::string> classes, std::vector<File> files,
                         ImageFolderOptions options)
    : dir_(std::move(dir)),
      classes_(std::move(classes)),
      files_(std::move(files)),
      options_(std::move(options)),
      corrupt_(new std::atomic<bool>[files_.size()]()) {}

absl::StatusOr<std::unique_ptr<ImageFolder>> ImageFolder::open(const std::string& dir, ImageFolderOptions options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": no such folder (expected an image folder: ", dir, "/<class>/<image>.JPEG)"));
  }
  std::vector<std::string> classes;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec)) classes.push_back(it->path().filename().string());
  }
  if (ec) return listing_error(dir, ec);
  if (classes.empty()) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": no class folders (expected an image folder: ", dir, "/<class>/<image>.JPEG)"));
  }
  std::sort(classes.begin(), classes.end());
  std::vector<File> files;
  std::vector<std::string> empty;
  for (int64_t label = 0; label < static_cast<int64_t>(classes.size()); ++label) {
    ASSIGN_OR_RETURN(const std::vector<std::string> paths, list_images(fs::path(dir) / classes[label]));
    if (paths.empty()) empty.push_back(classes[label]);
    for (const std::string& path : paths) files.push_back(File{path, label});
  }
  if (!empty.empty()) {
    return absl::NotFoundError(absl::StrCat(dir, ": no image files (.jpg, .jpeg, .png in any case) in the class folder",
                                            empty.size() > 1 ? "s " : " ", absl::StrJoin(empty, ", ")));
  }
  if (!options.pipeline) return absl::InvalidArgumentError(absl::StrCat(dir, ": ImageFolder needs a pipeline"));
  return std::unique_ptr<ImageFolder>(new ImageFolder(dir, std::move(classes), std::move(files), std::move(options)));
}

absl::StatusOr<Example> ImageFolder::get(int64_t index) const {
  RandomStream rng = RandomStream::for_sample(0, 0, index);
  return get_augmented(index, rng);
}

absl::StatusOr<Example> ImageFolder::get_augmented(int64_t index, RandomStream& rng) const {
  if (index < 0 || index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("ImageFolder::get: index ", index, " outside [0, ", size(), ")"));
  }
  if (!options_.skip_corrupt) return load(index, rng);
  for (int64_t step = 0; step < size(); ++step) {
    const int64_t candidate = (index + step) % size();
    if (corrupt_[candidate].load(std::memory_order_relaxed)) continue;
    // Every attempt draws from the stream as it came in, so the image served
    // does not depend on which corrupt files other threads flagged first.
    RandomStream attempt = rng;
    absl::StatusOr<Example> example = load(candidate, attempt);
    if (example.ok() || !unusable(example.status())) {
      rng = attempt;
      return example;
    }
    if (!corrupt_[candidate].exchange(true)) corrupt_count_.fetch_add(1, std::memory_order_relaxed);
  }
  return absl::DataLossError(absl::StrCat(dir_, ": none of the ", size(), " image files decodes"));
}

absl::StatusOr<Example> ImageFolder::load(int64_t index, RandomStream& rng) const {
  const File& file = files_[index];
  ASSIGN_OR_RETURN(const std::string bytes, read_file(file.path));
  ASSIGN_OR_RETURN(Tensor image, options_.pipeline(bytes, file.path, rng));
  Tensor label = Tensor::allocate({}, DType::kI64, Device::cpu());
  *label.data<int64_t>() = file.label;
  return Example{{std::move(image), std::move(label)}};
}

}  // namespace ts::data
