#include "data/readers/cifar.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "tensor/ops.h"

namespace ts::data {

int64_t cifar_record_bytes(CifarKind kind) { return (kind == CifarKind::k10 ? 1 : 2) + kCifarImageBytes; }

int64_t cifar_num_classes(CifarKind kind, bool coarse) {
  if (kind == CifarKind::k10) return 10;
  return coarse ? 20 : 100;
}

absl::StatusOr<CifarSet> parse_cifar(absl::string_view bytes, absl::string_view name, CifarKind kind) {
  const int64_t record = cifar_record_bytes(kind);
  const char* what = kind == CifarKind::k10 ? "CIFAR-10" : "CIFAR-100";
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": empty file, expected ", what, " records"));
  const int64_t n = bytes.size() / record;
  if (n * record != static_cast<int64_t>(bytes.size())) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": truncated ", what, " record ", n, ": the file has ",
                                                   bytes.size(), " bytes, not a multiple of the ", record,
                                                   "-byte record"));
  }
  const int64_t label_bytes = record - kCifarImageBytes;
  std::vector<int64_t> fine(n), coarse(kind == CifarKind::k100 ? n : 0);
  CifarSet set;
  set.images = Tensor::allocate({n, 3, 32, 32}, DType::kU8, Device::cpu());
  auto* pixels = static_cast<char*>(set.images.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    const auto* r = reinterpret_cast<const unsigned char*>(bytes.data() + i * record);
    fine[i] = r[label_bytes - 1];
    if (fine[i] >= cifar_num_classes(kind)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": record ", i, " has label ", fine[i], ", outside [0, ", cifar_num_classes(kind), ")"));
    }
    if (kind == CifarKind::k100) {
      coarse[i] = r[0];
      if (coarse[i] >= cifar_num_classes(kind, true)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": record ", i, " has coarse label ", coarse[i], ", outside [0, 20)"));
      }
    }
    std::memcpy(pixels + i * kCifarImageBytes, r + label_bytes, kCifarImageBytes);
  }
  set.labels = from_vector<int64_t>(fine, {n});
  if (kind == CifarKind::k100) set.coarse_labels = from_vector<int64_t>(coarse, {n});
  return set;
}

absl::StatusOr<std::unique_ptr<CifarDataset>> CifarDataset::open(const std::vector<std::string>& paths, CifarKind kind,
                                                                 bool coarse_labels) {
  if (paths.empty()) return absl::InvalidArgumentError("CifarDataset::open: no batch files given");
  if (coarse_labels && kind != CifarKind::k100) {
    return absl::InvalidArgumentError("CifarDataset::open: coarse labels exist only in CIFAR-100");
  }
  // Each file parses on its own so an error names the file it is in.
  std::vector<CifarSet> parts;
  int64_t total = 0;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(const std::string bytes, read_inflated(path));
    ASSIGN_OR_RETURN(CifarSet part, parse_cifar(bytes, path, kind));
    total += part.labels.numel();
    parts.push_back(std::move(part));
  }
  if (parts.size() == 1) return std::make_unique<CifarDataset>(std::move(parts[0]), coarse_labels);
  CifarSet set;
  set.images = Tensor::allocate({total, 3, 32, 32}, DType::kU8, Device::cpu());
  set.labels = Tensor::allocate({total}, DType::kI64, Device::cpu());
  if (kind == CifarKind::k100) set.coarse_labels = Tensor::allocate({total}, DType::kI64, Device::cpu());
  int64_t at = 0;
  for (const CifarSet& part : parts) {
    const int64_t n = part.labels.numel();
    copy_(set.images.narrow(0, at, n), part.images);
    copy_(set.labels.narrow(0, at, n), part.labels);
    if (kind == CifarKind::k100) copy_(set.coarse_labels.narrow(0, at, n), part.coarse_labels);
    at += n;
  }
  return std::make_unique<CifarDataset>(std::move(set), coarse_labels);
}

absl::StatusOr<Example> CifarDataset::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("CifarDataset::get: index ", index, " outside [0, ", size(), ")"));
  }
  const Tensor& labels = coarse_ ? set_.coarse_labels : set_.labels;
  return Example{{clone(set_.images.select(0, index)), clone(labels.select(0, index))}};
}

}  // namespace ts::data
