// Whole-file and chunked reads for the readers, with transparent gzip: every
// reader takes plain or .gz files, and every error names the file. The plain
// whole-file read and the writes are base/files.h's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::data {

// Output cap of gunzip() unless told otherwise: far above any dataset file
// here, low enough that a corrupt length field cannot exhaust memory.
inline constexpr int64_t kDefaultMaxInflatedBytes = int64_t{16} << 30;

inline bool is_gzip(absl::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Inflates gzip bytes (concatenated members too, zero padding after a member
// skipped); `name` labels errors.
absl::StatusOr<std::string> gunzip(absl::string_view bytes, absl::string_view name,
                                   int64_t max_bytes = kDefaultMaxInflatedBytes);

// The file's bytes (ts::read_file), inflated when they are gzip (by magic,
// not by suffix).
absl::StatusOr<std::string> read_inflated(const std::string& path);

// Sequential reads of a plain or gzip file in pieces, for streaming parsers.
class ChunkReader {
 public:
  static absl::StatusOr<std::unique_ptr<ChunkReader>> open(const std::string& path);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Appends up to `max_bytes` to `out`; returns how many (0 at end of file).
  absl::StatusOr<int64_t> read(std::string& out, int64_t max_bytes);

 private:
  ChunkReader(std::string path, void* file) : path_(std::move(path)), file_(file) {}
  std::string path_;
  void* file_;  // gzFile; gzread passes plain files through unchanged
};

}  // namespace ts::data
