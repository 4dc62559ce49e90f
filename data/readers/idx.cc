#include "data/readers/idx.h"

#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "tensor/ops.h"

namespace ts::data {
namespace {

uint32_t big_endian_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

int64_t element_size(uint8_t code) {
  switch (static_cast<IdxType>(code)) {
    case IdxType::kU8:
    case IdxType::kI8:
      return 1;
    case IdxType::kI16:
      return 2;
    case IdxType::kI32:
    case IdxType::kF32:
      return 4;
    case IdxType::kF64:
      return 8;
  }
  return 0;  // not an IDX type
}

// Checks that `array` is u8 of `rank`; `magic` names the expected header.
absl::Status expect_u8_rank(const IdxArray& array, int64_t rank, uint32_t magic, absl::string_view name,
                            absl::string_view what) {
  if (array.type != IdxType::kU8 || static_cast<int64_t>(array.dims.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: magic 0x%08x is not an IDX %s file (expected 0x%08x: u8 with %d dims)", name,
                        (static_cast<uint32_t>(array.type) << 8) | array.dims.size(), what, magic, rank));
  }
  return absl::OkStatus();
}

std::string first_existing(const std::string& dir, const std::string& base) {
  const std::string plain = dir + "/" + base;
  if (std::filesystem::exists(plain)) return plain;
  return plain + ".gz";  // if absent too, opening it names this path
}

}  // namespace

absl::StatusOr<IdxArray> parse_idx(absl::string_view bytes, absl::string_view name) {
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": empty file, expected an IDX header"));
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": truncated IDX header (", bytes.size(), " bytes, the magic number needs 4)"));
  }
  const uint32_t magic = big_endian_u32(bytes.data());
  const uint8_t code = (magic >> 8) & 0xff;
  const int64_t rank = magic & 0xff;
  if ((magic >> 16) != 0 || element_size(code) == 0 || rank < 1 || rank > 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: bad IDX magic number 0x%08x (expected 0x0000TTRR: type TT in {08,09,0B,0C,0D,0E}, rank RR in 1..8)", name,
        magic));
  }
  const int64_t header = 4 + 4 * rank;
  if (static_cast<int64_t>(bytes.size()) < header) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": truncated IDX header: ", rank, " dims need ", header,
                                                   " bytes, the file has ", bytes.size()));
  }
  IdxArray array;
  array.type = static_cast<IdxType>(code);
  const int64_t available = (static_cast<int64_t>(bytes.size()) - header) / element_size(code);
  // The element count saturates at available + 1: enough to say "too big"
  // without overflowing on dims of up to 2^32 - 1 each.
  int64_t numel = 1;
  std::string dims;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = big_endian_u32(bytes.data() + 4 + 4 * d);
    array.dims.push_back(size);
    absl::StrAppend(&dims, d == 0 ? "" : ", ", size);
    if (numel != 0) numel = (size != 0 && numel > available / size) ? available + 1 : numel * size;
  }
  if (numel > available) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": truncated: dims [", dims, "] need more than the file's ", bytes.size(), " bytes"));
  }
  const int64_t expected = header + numel * element_size(code);
  if (expected != static_cast<int64_t>(bytes.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", bytes.size() - expected, " trailing bytes after the data of dims [", dims, "]"));
  }
  array.data = bytes.substr(header);
  return array;
}

absl::StatusOr<IdxImageSet> parse_idx_image_set(absl::string_view image_bytes, absl::string_view image_name,
                                                absl::string_view label_bytes, absl::string_view label_name,
                                                int64_t num_classes) {
  ASSIGN_OR_RETURN(const IdxArray images, parse_idx(image_bytes, image_name));
  RETURN_IF_ERROR(expect_u8_rank(images, 3, 0x803, image_name, "images"));
  ASSIGN_OR_RETURN(const IdxArray labels, parse_idx(label_bytes, label_name));
  RETURN_IF_ERROR(expect_u8_rank(labels, 1, 0x801, label_name, "labels"));
  const int64_t n = images.dims[0];
  if (labels.dims[0] != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_name, ": ", labels.dims[0], " labels but ", image_name, " holds ", n, " images"));
  }
  std::vector<int64_t> label_values(n);
  for (int64_t i = 0; i < n; ++i) {
    label_values[i] = static_cast<unsigned char>(labels.data[i]);
    if (label_values[i] >= num_classes) {
      return absl::InvalidArgumentError(absl::StrCat(label_name, ": label ", label_values[i], " of example ", i,
                                                     " is outside [0, ", num_classes, ")"));
    }
  }
  IdxImageSet set;
  set.images = Tensor::allocate({n, 1, images.dims[1], images.dims[2]}, DType::kU8, Device::cpu());
  if (!images.data.empty()) std::memcpy(set.images.raw_data(), images.data.data(), images.data.size());
  set.labels = from_vector<int64_t>(label_values, {n});
  return set;
}

absl::StatusOr<std::unique_ptr<IdxImageDataset>> IdxImageDataset::open(const std::string& images_path,
                                                                       const std::string& labels_path,
                                                                       int64_t num_classes) {
  ASSIGN_OR_RETURN(const std::string image_bytes, read_inflated(images_path));
  ASSIGN_OR_RETURN(const std::string label_bytes, read_inflated(labels_path));
  ASSIGN_OR_RETURN(IdxImageSet set,
                   parse_idx_image_set(image_bytes, images_path, label_bytes, labels_path, num_classes));
  return std::make_unique<IdxImageDataset>(std::move(set));
}

absl::StatusOr<Example> IdxImageDataset::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("IdxImageDataset::get: index ", index, " outside [0, ", size(), ")"));
  }
  return Example{{clone(set_.images.select(0, index)), clone(set_.labels.select(0, index))}};
}

absl::StatusOr<std::unique_ptr<IdxImageDataset>> open_mnist(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  return IdxImageDataset::open(first_existing(dir, prefix + "-images-idx3-ubyte"),
                               first_existing(dir, prefix + "-labels-idx1-ubyte"));
}

}  // namespace ts::data
