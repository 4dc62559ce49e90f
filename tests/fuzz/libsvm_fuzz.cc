// LIBSVM parsing: the CSR invariants of every accepted input, and the same
// result (or the same error) when the text arrives in two pieces.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "data/readers/libsvm.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

void check_csr(const ts::data::CsrMatrix& m, ts::data::LibsvmLabels labels) {
  FUZZ_CHECK(static_cast<int64_t>(m.row_ptr.size()) == m.rows() + 1);
  FUZZ_CHECK(m.row_ptr.front() == 0 && m.row_ptr.back() == m.nnz());
  FUZZ_CHECK(m.col_idx.size() == m.values.size());
  for (int64_t r = 0; r < m.rows(); ++r) {
    FUZZ_CHECK(m.row_ptr[r] <= m.row_ptr[r + 1]);
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      FUZZ_CHECK(m.col_idx[k] >= 0 && m.col_idx[k] < m.num_features);
      if (k > m.row_ptr[r]) FUZZ_CHECK(m.col_idx[k] > m.col_idx[k - 1]);
    }
    if (labels == ts::data::LibsvmLabels::kBinary) FUZZ_CHECK(m.labels[r] == 0 || m.labels[r] == 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte picks the label mode and the split point.
  const auto labels = data[0] & 1 ? ts::data::LibsvmLabels::kRaw : ts::data::LibsvmLabels::kBinary;
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const ts::data::LibsvmOptions options{labels, data[0] & 2 ? 100 : 0};
  auto whole = ts::data::parse_libsvm(text, "fuzz", options);

  ts::data::LibsvmParser parser("fuzz", options);
  const size_t split = text.empty() ? 0 : (data[0] >> 2) * 7919 % (text.size() + 1);
  absl::Status status = parser.feed(text.substr(0, split));
  if (status.ok()) status = parser.feed(text.substr(split));
  auto pieces = status.ok() ? parser.finish() : absl::StatusOr<ts::data::CsrMatrix>(status);

  FUZZ_CHECK(whole.ok() == pieces.ok());
  if (!whole.ok()) {
    FUZZ_CHECK(whole.status() == pieces.status());
    FUZZ_CHECK(absl::StartsWith(whole.status().message(), "fuzz"));
    return 0;
  }
  check_csr(*whole, labels);
  FUZZ_CHECK(whole->row_ptr == pieces->row_ptr && whole->col_idx == pieces->col_idx);
  FUZZ_CHECK(whole->labels == pieces->labels && whole->num_features == pieces->num_features);
  return 0;
}
