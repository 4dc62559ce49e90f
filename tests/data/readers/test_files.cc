#include "tests/data/readers/test_files.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"

namespace ts::data::testing {
namespace {

void append_u32(std::string& out, uint32_t v, bool big_endian) {
  for (int i = 0; i < 4; ++i) {
    const int shift = big_endian ? 24 - 8 * i : 8 * i;
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

}  // namespace

std::string temp_path(absl::string_view name) { return absl::StrCat(::testing::TempDir(), "/", name); }

std::string write_temp(absl::string_view name, absl::string_view bytes) {
  const std::string path = temp_path(name);
  const absl::Status status = write_file_atomically(path, bytes);
  if (!status.ok()) {
    std::fprintf(stderr, "fatal in test harness: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
  return path;
}

std::string gzip(absl::string_view bytes) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = bytes.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, absl::string_view data) {
  std::string out;
  append_u32(out, (uint32_t{type} << 8) | dims.size(), true);
  for (uint32_t d : dims) append_u32(out, d, true);
  out.append(data.data(), data.size());
  return out;
}

std::string mo_bytes(const std::vector<MoMessage>& messages, bool big_endian) {
  const uint32_t n = messages.size();
  const uint32_t originals = 28, translations = originals + 8 * n;
  uint32_t offset = translations + 8 * n;
  std::string header, tables_o, tables_t, strings;
  append_u32(header, 0x950412de, big_endian);
  for (uint32_t v : {0u, n, originals, translations, 0u, offset}) append_u32(header, v, big_endian);
  for (const MoMessage& m : messages) {
    append_u32(tables_o, m.original.size(), big_endian);
    append_u32(tables_o, offset + strings.size(), big_endian);
    strings += m.original;
    strings.push_back('\0');
  }
  for (const MoMessage& m : messages) {
    append_u32(tables_t, m.translation.size(), big_endian);
    append_u32(tables_t, offset + strings.size(), big_endian);
    strings += m.translation;
    strings.push_back('\0');
  }
  return header + tables_o + tables_t + strings;
}

}  // namespace ts::data::testing
