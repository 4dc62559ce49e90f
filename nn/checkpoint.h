// Checkpoints: named tensors in a binary file of our own format, written
// atomically and verified on load. Module state dicts, optimizer state and
// run state all use it.
//
// Layout, little-endian:
//   header   magic "TSCKPT\x1a\n", u32 format version, u32 entry count,
//            u64 file size in bytes
//   entry    u32 name length, name, u8 dtype code, u32 rank, i64 dims[rank],
//            u64 data size in bytes, data (row-major), u32 CRC-32C of the
//            entry's bytes before it
//   trailer  u32 CRC-32C of every byte before it
// The file size catches truncation, the per-entry checksum names the entry a
// corruption hit, and the trailer covers the header and all the rest.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nn/module.h"

namespace ts::nn {

inline constexpr uint32_t kCheckpointVersion = 1;

// Writes to a temporary file in path's directory, fsyncs it, renames it over
// `path` and fsyncs the directory: a crash leaves the old file or the new one,
// never a mix. Tensors may live on any device. Names must be unique.
absl::Status save_tensors(const std::string& path, const NamedTensors& tensors);

// The entries in file order, as contiguous CPU tensors. A bad magic, another
// format version, a truncated file or a checksum mismatch is an error naming
// the file (and the entry, where one is at fault).
absl::StatusOr<NamedTensors> load_tensors(const std::string& path);

// The same format in memory, for state carried inside another file (the
// task runner's checkpoint). `name` prefixes decoding errors.
absl::StatusOr<std::string> encode_tensors(const NamedTensors& tensors);
absl::StatusOr<NamedTensors> decode_tensors(absl::string_view bytes, absl::string_view name);

// module.state_dict() through save_tensors.
absl::Status save_state_dict(const Module& module, const std::string& path);
// load_tensors, then module.load_state_dict (strict: missing and unexpected
// entries, shape and dtype mismatches are errors naming the file and entry).
absl::Status load_state_dict(Module& module, const std::string& path);

}  // namespace ts::nn
