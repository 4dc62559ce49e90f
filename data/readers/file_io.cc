#include "data/readers/file_io.h"

#include <zlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/files.h"

namespace ts::data {

absl::StatusOr<std::string> gunzip(absl::string_view bytes, absl::string_view name, int64_t max_bytes) {
  z_stream z{};
  // 16 + MAX_WBITS: gzip wrapper only, so a zlib or raw stream is an error.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(name, ": inflateInit2 failed"));
  }
  std::string out;
  out.resize(std::min<int64_t>(max_bytes, std::max<size_t>(bytes.size() * 4, 1 << 16)));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  size_t produced = 0;
  size_t remaining_in = bytes.size();
  absl::Status status;
  while (true) {
    // avail_in/avail_out are 32-bit: feed huge buffers in pieces.
    const size_t in_step = std::min<size_t>(remaining_in, 1u << 30);
    z.avail_in = static_cast<uInt>(in_step);
    if (produced == out.size()) {
      if (static_cast<int64_t>(out.size()) >= max_bytes) {
        status =
            absl::ResourceExhaustedError(absl::StrCat(name, ": gzip data inflates to more than ", max_bytes, " bytes"));
        break;
      }
      out.resize(std::min<int64_t>(max_bytes, out.size() * 2));
    }
    const size_t out_step = std::min<size_t>(out.size() - produced, 1u << 30);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.avail_out = static_cast<uInt>(out_step);
    const int rc = inflate(&z, Z_NO_FLUSH);
    produced += out_step - z.avail_out;
    remaining_in -= in_step - z.avail_in;
    if (rc == Z_STREAM_END) {
      // Zero padding after a member is skipped, as GNU gzip and CPython do
      // (tape blocks, preallocated files); another gzip member may follow
      // (as `cat a.gz b.gz` makes).
      while (remaining_in > 0 && *z.next_in == 0) {
        ++z.next_in;
        --remaining_in;
      }
      if (remaining_in == 0) break;
      if (inflateReset(&z) != Z_OK) {
        status = absl::InternalError(absl::StrCat(name, ": inflateReset failed"));
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && remaining_in == 0 && z.avail_out != 0) {
      status = absl::DataLossError(absl::StrCat(name, ": gzip data is truncated"));
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status =
          absl::DataLossError(absl::StrCat(name, ": corrupt gzip data: ", z.msg != nullptr ? z.msg : "inflate failed"));
      break;
    }
  }
  inflateEnd(&z);
  if (!status.ok()) return status;
  out.resize(produced);
  return out;
}

absl::StatusOr<std::string> read_inflated(const std::string& path) {
  absl::StatusOr<std::string> bytes = ts::read_file(path);
  if (bytes.ok() && is_gzip(*bytes)) return gunzip(*bytes, path);
  return bytes;
}

absl::StatusOr<std::unique_ptr<ChunkReader>> ChunkReader::open(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  // gzopen fails only in open() or malloc, both of which set errno.
  if (f == nullptr) return errno_error("cannot open", path);
  gzbuffer(f, 1 << 20);
  return std::unique_ptr<ChunkReader>(new ChunkReader(path, f));
}

ChunkReader::~ChunkReader() { gzclose(static_cast<gzFile>(file_)); }

absl::StatusOr<int64_t> ChunkReader::read(std::string& out, int64_t max_bytes) {
  const size_t old = out.size();
  out.resize(old + max_bytes);
  const int n = gzread(static_cast<gzFile>(file_), out.data() + old, static_cast<unsigned>(max_bytes));
  // gzread reports a truncated gzip stream as a plain end of file (Z_BUF_ERROR
  // is "not serious" to it), so the error state is checked on every short read.
  int code = Z_OK;
  const char* msg = gzerror(static_cast<gzFile>(file_), &code);
  if (n < 0 || code != Z_OK) {
    out.resize(old);
    return absl::DataLossError(absl::StrCat(path_, ": read failed: ", msg));
  }
  out.resize(old + n);
  return n;
}

}  // namespace ts::data
