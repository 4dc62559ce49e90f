#include "tasks/common/run_state_file.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/crc32c.h"
#include "base/files.h"
#include "base/status_macros.h"

namespace ts::tasks {
namespace {

// Layout, integers little-endian:
//   magic[8] | version u32 | blob count u32
//   | section: the RunState
//   | per blob: name length u32 | name | section: its bytes
// where a section is: length u64 | CRC-32C u32 | bytes.
constexpr char kMagic[8] = {'T', 'S', 'R', 'U', 'N', 'S', 'T', '\n'};
// 3: blobs as sections of their own (2 held them in the RunState, which
// protobuf cannot serialize past 2 GiB).
constexpr uint32_t kVersion = 3;

void put_le(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string section_header(absl::string_view bytes) {
  std::string header;
  put_le(bytes.size(), 8, header);
  put_le(crc32c(bytes), 4, header);
  return header;
}

// Reads the file front to back; every read checks what is left.
class Reader {
 public:
  Reader(const std::string& path, absl::string_view file) : path_(path), file_(file) {}

  absl::Status bad(absl::string_view why) const {
    return absl::DataLossError(absl::StrCat("run state ", path_, ": ", why));
  }
  absl::StatusOr<absl::string_view> take(uint64_t n, absl::string_view what) {
    if (n > file_.size() - at_) {
      return bad(absl::StrCat("truncated in ", what, " (", n, " bytes needed at byte ", at_, ", the file has ",
                              file_.size(), ")"));
    }
    const absl::string_view out = file_.substr(at_, n);
    at_ += n;
    return out;
  }
  absl::StatusOr<uint64_t> take_le(int bytes, absl::string_view what) {
    ASSIGN_OR_RETURN(const absl::string_view b, take(bytes, what));
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
    return v;
  }
  absl::StatusOr<absl::string_view> take_section(absl::string_view what) {
    ASSIGN_OR_RETURN(const uint64_t length, take_le(8, what));
    ASSIGN_OR_RETURN(const uint64_t crc, take_le(4, what));
    ASSIGN_OR_RETURN(const absl::string_view bytes, take(length, what));
    if (crc32c(bytes) != crc) return bad(absl::StrCat("checksum mismatch in ", what, " (corrupt file)"));
    return bytes;
  }
  bool done() const { return at_ == file_.size(); }

 private:
  const std::string& path_;
  absl::string_view file_;
  uint64_t at_ = 0;
};

}  // namespace

absl::Status save_run_state(const std::string& path, const RunState& state, const StateBlobs& blobs) {
  std::string head;
  if (!state.SerializeToString(&head))
    return absl::InternalError(absl::StrCat("cannot serialize run state for ", path));
  ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path));
  std::string front(kMagic, sizeof kMagic);
  put_le(kVersion, 4, front);
  put_le(blobs.size(), 4, front);
  RETURN_IF_ERROR(file.write(front));
  RETURN_IF_ERROR(file.write(section_header(head)));
  RETURN_IF_ERROR(file.write(head));
  for (const auto& [name, bytes] : blobs) {
    std::string name_field;
    put_le(name.size(), 4, name_field);
    RETURN_IF_ERROR(file.write(name_field + name + section_header(bytes)));
    RETURN_IF_ERROR(file.write(bytes));
  }
  return file.commit();
}

absl::StatusOr<RunCheckpoint> load_run_state(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::open(path);
  if (!file.ok()) return absl::Status(file.status().code(), absl::StrCat("run state: ", file.status().message()));
  RunCheckpoint checkpoint;
  checkpoint.file = std::make_shared<const MappedFile>(*std::move(file));
  Reader in(path, checkpoint.file->view());
  ASSIGN_OR_RETURN(const absl::string_view magic, in.take(sizeof kMagic, "the header"));
  if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0) return in.bad("not a run-state file (bad magic)");
  ASSIGN_OR_RETURN(const uint64_t version, in.take_le(4, "the header"));
  if (version != kVersion) return in.bad(absl::StrCat("format version ", version, ", this build reads ", kVersion));
  ASSIGN_OR_RETURN(const uint64_t count, in.take_le(4, "the header"));
  ASSIGN_OR_RETURN(const absl::string_view head, in.take_section("the run state"));
  if (head.size() > INT32_MAX || !checkpoint.state.ParseFromArray(head.data(), static_cast<int>(head.size()))) {
    return in.bad("the run state does not parse");
  }
  for (uint64_t i = 0; i < count; ++i) {
    const std::string what = absl::StrCat("blob ", i, " of ", count);
    ASSIGN_OR_RETURN(const uint64_t name_length, in.take_le(4, what));
    ASSIGN_OR_RETURN(const absl::string_view name, in.take(name_length, what));
    ASSIGN_OR_RETURN(const absl::string_view bytes, in.take_section(absl::StrCat("blob \"", name, "\"")));
    if (!checkpoint.blobs.emplace(std::string(name), bytes).second) {
      return in.bad(absl::StrCat("blob \"", name, "\" appears twice"));
    }
  }
  if (!in.done()) return in.bad("padded: bytes after the last blob");
  return checkpoint;
}

}  // namespace ts::tasks
