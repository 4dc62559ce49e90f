#include "tasks/common/run_state_file.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/crc32c.h"
#include "base/files.h"

namespace ts::tasks {
namespace {

// Layout: magic[8] | version u32 | payload length u64 | payload CRC-32C u32 |
// payload (a serialized RunState); integers little-endian.
constexpr char kMagic[8] = {'T', 'S', 'R', 'U', 'N', 'S', 'T', '\n'};
// 2: the run state as the trainer keeps it (epoch records, step statistics
// and target as messages); version 1 files came from the runner before it.
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderSize = 8 + 4 + 8 + 4;

void put_le(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t get_le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

}  // namespace

absl::Status save_run_state(const std::string& path, const RunState& state) {
  std::string payload;
  if (!state.SerializeToString(&payload))
    return absl::InternalError(absl::StrCat("cannot serialize run state for ", path));
  std::string file(kMagic, sizeof kMagic);
  put_le(kVersion, 4, file);
  put_le(payload.size(), 8, file);
  put_le(crc32c(payload), 4, file);
  file += payload;
  return write_file_atomically(path, file);
}

absl::StatusOr<RunState> load_run_state(const std::string& path) {
  absl::StatusOr<std::string> file = read_file(path);
  if (!file.ok()) return absl::Status(file.status().code(), absl::StrCat("run state: ", file.status().message()));
  const auto bad = [&](const std::string& why) {
    return absl::DataLossError(absl::StrCat("run state ", path, ": ", why));
  };
  if (file->size() < kHeaderSize) return bad(absl::StrCat("truncated header (", file->size(), " bytes)"));
  if (std::memcmp(file->data(), kMagic, sizeof kMagic) != 0) return bad("not a run-state file (bad magic)");
  const uint64_t version = get_le(*file, 8, 4);
  if (version != kVersion) return bad(absl::StrCat("format version ", version, ", this build reads ", kVersion));
  const uint64_t length = get_le(*file, 12, 8);
  if (file->size() - kHeaderSize != length) {
    return bad(absl::StrCat("truncated or padded: header says ", length, " payload bytes, file has ",
                            file->size() - kHeaderSize));
  }
  const absl::string_view payload(file->data() + kHeaderSize, length);
  if (crc32c(payload) != get_le(*file, 20, 4)) return bad("checksum mismatch (corrupt file)");
  RunState state;
  if (!state.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) return bad("payload does not parse");
  return state;
}

}  // namespace ts::tasks
