// LIBSVM / SVMlight text ("<label> <index>:<value> ..." per line, 1-based
// ascending indices, '#' comments, qid:<n> ignored), parsed in a stream into
// a CSR matrix, with a dense view and a Dataset of dense rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/dataset.h"
#include "tensor/tensor.h"

namespace ts::data {

enum class LibsvmLabels {
  // Binary labels, stored as 0 or 1: -1 and 0 become 0, +1 (or 1) becomes 1.
  // A file must use one convention: {-1, +1} or {0, 1}; mixing -1 with 0, or
  // any other value, is an error.
  kBinary,
  // Labels kept as written (regression, multiclass).
  kRaw,
};

struct LibsvmOptions {
  LibsvmLabels labels = LibsvmLabels::kBinary;
  // 0: the largest index seen. Otherwise the width of every row (e.g. the
  // train set's for its test set); a larger index is an error.
  int64_t num_features = 0;
};

// Compressed sparse rows; col_idx is 0-based (file index - 1).
struct CsrMatrix {
  std::vector<int64_t> row_ptr{0};
  std::vector<int32_t> col_idx;
  std::vector<float> values;
  std::vector<float> labels;
  int64_t num_features = 0;

  int64_t rows() const { return static_cast<int64_t>(labels.size()); }
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
};

// Incremental parser: feed() text in pieces split anywhere (a line may span
// pieces), then finish(). Errors read "name:line:column: what".
class LibsvmParser {
 public:
  explicit LibsvmParser(std::string name, LibsvmOptions options = {});

  absl::Status feed(absl::string_view text);
  // Parses a last line without a newline and returns the matrix; the parser
  // is spent afterwards.
  absl::StatusOr<CsrMatrix> finish();

 private:
  absl::Status parse_line(absl::string_view line);
  absl::Status error_at(const char* line_begin, const char* at, absl::string_view what) const;

  std::string name_;
  LibsvmOptions options_;
  CsrMatrix matrix_;
  std::string partial_line_;
  int64_t line_number_ = 0;  // of the line being parsed, 1-based
  int64_t max_index_ = 0;
  bool seen_minus_one_ = false;
  bool seen_zero_ = false;
};

// The whole text at once; `name` labels errors.
absl::StatusOr<CsrMatrix> parse_libsvm(absl::string_view text, absl::string_view name, LibsvmOptions options = {});
// A plain or gzip'd file, read and parsed in chunks (no whole-file copy).
absl::StatusOr<CsrMatrix> read_libsvm(const std::string& path, LibsvmOptions options = {});

// f32 [rows, num_features]; refuses more than max_features columns, since a
// dense copy of a wide sparse set would not fit.
absl::StatusOr<Tensor> to_dense(const CsrMatrix& matrix, int64_t max_features = int64_t{1} << 16);

// get(i) gives {features f32 [num_features] (row i densified), label}: the
// label is an i64 scalar (0 or 1) with LibsvmLabels::kBinary, else f32.
class LibsvmDataset : public Dataset {
 public:
  LibsvmDataset(CsrMatrix matrix, LibsvmLabels labels) : matrix_(std::move(matrix)), labels_(labels) {}
  static absl::StatusOr<std::unique_ptr<LibsvmDataset>> open(const std::string& path, LibsvmOptions options = {});

  int64_t size() const override { return matrix_.rows(); }
  absl::StatusOr<Example> get(int64_t index) const override;
  const CsrMatrix& matrix() const { return matrix_; }

 private:
  CsrMatrix matrix_;
  LibsvmLabels labels_;
};

}  // namespace ts::data
