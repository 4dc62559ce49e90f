#include "nn/checkpoint.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/crc32c.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

constexpr std::array<char, 8> kMagic = {'T', 'S', 'C', 'K', 'P', 'T', '\x1a', '\n'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8;
constexpr size_t kTrailerSize = 4;
// Far above any real tensor; a larger rank means the entry is corrupt.
constexpr uint32_t kMaxRank = 16;

// Codes are part of the file format: never renumber, only append.
constexpr std::array<std::pair<DType, uint8_t>, 8> kDTypeCodes = {{
    {DType::kBool, 1},
    {DType::kU8, 2},
    {DType::kI32, 3},
    {DType::kI64, 4},
    {DType::kF16, 5},
    {DType::kBF16, 6},
    {DType::kF32, 7},
    {DType::kF64, 8},
}};

uint8_t dtype_code(DType dtype) {
  for (const auto& [d, code] : kDTypeCodes) {
    if (d == dtype) return code;
  }
  return 0;  // every DType is in the table
}

std::optional<DType> dtype_from_code(uint8_t code) {
  for (const auto& [d, c] : kDTypeCodes) {
    if (c == code) return d;
  }
  return std::nullopt;
}

size_t entry_size(const std::string& name, const Tensor& t) {
  return 4 + name.size() + 1 + 4 + 8 * t.shape().size() + 8 + static_cast<size_t>(t.numel() * t.itemsize()) + 4;
}

// Writes into a file (buffered: entries are written a field at a time) or a
// string, keeping the running checksums of the whole file and of the current
// entry.
class Writer {
 public:
  explicit Writer(AtomicFile* file) : file_(file) { buffer_.reserve(kCapacity); }
  explicit Writer(std::string* out) : out_(out) {}

  absl::Status put(absl::string_view bytes) {
    file_crc_ = crc32c(bytes, file_crc_);
    entry_crc_ = crc32c(bytes, entry_crc_);
    if (out_ != nullptr) {
      out_->append(bytes.data(), bytes.size());
      return absl::OkStatus();
    }
    if (buffer_.size() + bytes.size() > kCapacity) RETURN_IF_ERROR(flush());
    // Tensor data as large as the buffer goes straight to the file.
    if (bytes.size() >= kCapacity) return file_->write(bytes);
    buffer_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status put_value(T value) {
    return put(absl::string_view(reinterpret_cast<const char*>(&value), sizeof(T)));
  }

  void begin_entry() { entry_crc_ = 0; }
  uint32_t entry_crc() const { return entry_crc_; }
  uint32_t file_crc() const { return file_crc_; }

  absl::Status flush() {
    if (out_ != nullptr || buffer_.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(file_->write(buffer_));
    buffer_.clear();
    return absl::OkStatus();
  }

 private:
  static constexpr size_t kCapacity = 1 << 20;
  AtomicFile* file_ = nullptr;
  std::string* out_ = nullptr;
  std::string buffer_;
  uint32_t file_crc_ = 0;
  uint32_t entry_crc_ = 0;
};

absl::Status write_all(Writer& w, const NamedTensors& tensors) {
  size_t file_size = kHeaderSize + kTrailerSize;
  for (const auto& [name, t] : tensors) file_size += entry_size(name, t);

  RETURN_IF_ERROR(w.put(absl::string_view(kMagic.data(), kMagic.size())));
  RETURN_IF_ERROR(w.put_value<uint32_t>(kCheckpointVersion));
  RETURN_IF_ERROR(w.put_value<uint32_t>(static_cast<uint32_t>(tensors.size())));
  RETURN_IF_ERROR(w.put_value<uint64_t>(file_size));
  for (const auto& [name, t] : tensors) {
    // One entry at a time on the host: a GPU model is not copied whole.
    const Tensor host = contiguous(to(t, Device::cpu()));
    w.begin_entry();
    RETURN_IF_ERROR(w.put_value<uint32_t>(static_cast<uint32_t>(name.size())));
    RETURN_IF_ERROR(w.put(name));
    RETURN_IF_ERROR(w.put_value<uint8_t>(dtype_code(host.dtype())));
    RETURN_IF_ERROR(w.put_value<uint32_t>(static_cast<uint32_t>(host.dim())));
    for (int64_t d : host.shape()) RETURN_IF_ERROR(w.put_value<int64_t>(d));
    const uint64_t bytes = static_cast<uint64_t>(host.numel() * host.itemsize());
    RETURN_IF_ERROR(w.put_value<uint64_t>(bytes));
    RETURN_IF_ERROR(w.put(absl::string_view(static_cast<const char*>(host.raw_data()), bytes)));
    RETURN_IF_ERROR(w.put_value<uint32_t>(w.entry_crc()));
  }
  RETURN_IF_ERROR(w.put_value<uint32_t>(w.file_crc()));
  return w.flush();
}

// Reads a file parsed front to back; running past the end is reported by the
// caller, which knows which entry it was reading.
class Cursor {
 public:
  explicit Cursor(absl::string_view bytes) : bytes_(bytes) {}
  bool has(size_t n) const { return bytes_.size() - pos_ >= n; }
  template <typename T>
  T take() {
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  const char* take_bytes(size_t n) {
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t pos() const { return pos_; }
  // Checksum of the bytes from `start` to the current position.
  uint32_t crc_from(size_t start) const { return crc32c(bytes_.substr(start, pos_ - start)); }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

absl::Status check_entries(absl::string_view what, const NamedTensors& tensors) {
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": an entry has an empty name"));
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": entry '", name, "' appears twice"));
    }
    if (!t.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": entry '", name, "' is an undefined tensor"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> encode_tensors(const NamedTensors& tensors) {
  RETURN_IF_ERROR(check_entries("encode_tensors", tensors));
  std::string out;
  Writer w(&out);
  RETURN_IF_ERROR(write_all(w, tensors));
  return out;
}

absl::Status save_tensors(const std::string& path, const NamedTensors& tensors) {
  RETURN_IF_ERROR(check_entries(absl::StrCat("checkpoint ", path), tensors));
  ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path));
  Writer w(&file);
  RETURN_IF_ERROR(write_all(w, tensors));
  return file.commit();
}

absl::StatusOr<NamedTensors> load_tensors(const std::string& path) {
  // Mapped, not read: every rank loads, and the decoded tensors are then the
  // only private copy of the data (a read would double the peak).
  ASSIGN_OR_RETURN(const MappedFile file, MappedFile::open(path));
  return decode_tensors(file.view(), absl::StrCat("checkpoint ", path));
}

absl::StatusOr<NamedTensors> decode_tensors(absl::string_view bytes, absl::string_view name) {
  const std::string where = absl::StrCat(name, ": ");
  if (std::memcmp(bytes.data(), kMagic.data(), std::min(bytes.size(), kMagic.size())) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, "bad magic (not a checkpoint of this format)"));
  }
  if (bytes.size() < kHeaderSize) {
    return absl::DataLossError(
        absl::StrCat(where, "truncated: ", bytes.size(), " bytes, shorter than the ", kHeaderSize, "-byte header"));
  }
  Cursor c(bytes);
  c.take_bytes(kMagic.size());
  const uint32_t version = c.take<uint32_t>();
  if (version != kCheckpointVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, "format version ", version, ", this build reads version ", kCheckpointVersion));
  }
  const uint32_t count = c.take<uint32_t>();
  const uint64_t declared_size = c.take<uint64_t>();
  const auto cut = [&](absl::string_view at) {
    if (bytes.size() < declared_size) {
      return absl::DataLossError(absl::StrCat(where, "truncated ", at, ": the header says ", declared_size,
                                              " bytes, the file has ", bytes.size()));
    }
    return absl::DataLossError(absl::StrCat(where, "corrupt ", at, ": it runs past the end"));
  };

  // `count` sizes nothing up front: the trailer's checksum has not vouched for it yet.
  NamedTensors out;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t start = c.pos();
    const std::string entry = absl::StrCat("entry ", i);
    if (!c.has(4)) return cut(entry);
    const uint32_t name_size = c.take<uint32_t>();
    if (!c.has(name_size)) return cut(entry);
    std::string name(c.take_bytes(name_size), name_size);
    const std::string at = absl::StrCat("entry ", i, " '", name, "'");
    if (!c.has(1 + 4)) return cut(at);
    const uint8_t code = c.take<uint8_t>();
    const uint32_t rank = c.take<uint32_t>();
    const std::optional<DType> dtype = dtype_from_code(code);
    if (!dtype) {
      return absl::DataLossError(absl::StrCat(where, at, ": unknown dtype code ", static_cast<int>(code)));
    }
    if (rank > kMaxRank) {
      return absl::DataLossError(absl::StrCat(where, at, ": corrupt rank ", rank));
    }
    if (!c.has(8 * rank + 8)) return cut(at);
    Shape shape;
    int64_t numel = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      const int64_t size = c.take<int64_t>();
      if (size < 0 || (size > 0 && numel > (int64_t{1} << 50) / size)) {
        return absl::DataLossError(absl::StrCat(where, at, ": corrupt dim ", size));
      }
      numel *= size;
      shape.push_back(size);
    }
    const uint64_t data_size = c.take<uint64_t>();
    if (data_size != static_cast<uint64_t>(numel * dtype_size(*dtype))) {
      return absl::DataLossError(
          absl::StrCat(where, at, ": ", data_size, " data bytes for ", dtype_name(*dtype), shape_str(shape)));
    }
    if (!c.has(data_size + 4)) return cut(at);
    const char* data = c.take_bytes(data_size);
    const uint32_t computed = c.crc_from(start);
    const uint32_t stored = c.take<uint32_t>();
    if (stored != computed) {
      return absl::DataLossError(
          absl::StrFormat("%s%s: checksum mismatch (stored %08x, computed %08x)", where, at, stored, computed));
    }
    Tensor t = Tensor::allocate(shape, *dtype, Device::cpu());
    if (data_size > 0) std::memcpy(t.raw_data(), data, data_size);
    out.emplace_back(std::move(name), std::move(t));
  }
  if (!c.has(kTrailerSize)) return cut("after the last entry");
  if (bytes.size() != declared_size) {
    return absl::DataLossError(
        absl::StrCat(where, "the header says ", declared_size, " bytes, the file has ", bytes.size()));
  }
  // The trailer is the file's last 4 bytes whatever the entries claimed.
  const size_t body = bytes.size() - kTrailerSize;
  const uint32_t computed = crc32c(bytes.substr(0, body));
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + body, sizeof(stored));
  if (stored != computed) {
    return absl::DataLossError(
        absl::StrFormat("%sfile checksum mismatch (stored %08x, computed %08x)", where, stored, computed));
  }
  if (c.pos() != body) {
    return absl::DataLossError(
        absl::StrCat(where, "the entries end at byte ", c.pos(), ", the trailer starts at ", body));
  }
  return out;
}

absl::Status save_state_dict(const Module& module, const std::string& path) {
  return save_tensors(path, module.state_dict());
}

absl::Status load_state_dict(Module& module, const std::string& path) {
  ASSIGN_OR_RETURN(NamedTensors state, load_tensors(path));
  const absl::Status status = module.load_state_dict(state);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("checkpoint ", path, ": ", status.message()));
}

}  // namespace ts::nn
