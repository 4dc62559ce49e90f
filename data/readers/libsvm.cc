#include "data/readers/libsvm.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "tensor/ops.h"

namespace ts::data {
namespace {

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

// std::from_chars takes no leading '+', which LIBSVM labels often have ("+1").
template <typename T>
inline std::from_chars_result parse_number(const char* p, const char* end, T& value) {
  if (p < end && *p == '+' && p + 1 < end && *(p + 1) != '-' && *(p + 1) != '+') ++p;
  return std::from_chars(p, end, value);
}

}  // namespace

LibsvmParser::LibsvmParser(std::string name, LibsvmOptions options) : name_(std::move(name)), options_(options) {}

absl::Status LibsvmParser::error_at(const char* line_begin, const char* at, absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(name_, ":", line_number_, ":", at - line_begin + 1, ": ", what));
}

absl::Status LibsvmParser::feed(absl::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  if (!partial_line_.empty()) {
    const char* newline = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (newline == nullptr) {
      partial_line_.append(p, end);
      return absl::OkStatus();
    }
    partial_line_.append(p, newline);
    ++line_number_;
    RETURN_IF_ERROR(parse_line(partial_line_));
    partial_line_.clear();
    p = newline + 1;
  }
  while (p < end) {
    const char* newline = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (newline == nullptr) {
      partial_line_.assign(p, end);
      break;
    }
    ++line_number_;
    RETURN_IF_ERROR(parse_line(absl::string_view(p, newline - p)));
    p = newline + 1;
  }
  return absl::OkStatus();
}

absl::Status LibsvmParser::parse_line(absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (const size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  const char* p = skip_blanks(begin, end);
  if (p == end) return absl::OkStatus();  // blank or comment-only line

  double label;
  auto [after_label, label_ec] = parse_number(p, end, label);
  if (label_ec != std::errc() || (after_label < end && !is_blank(*after_label)) || !std::isfinite(label)) {
    return error_at(begin, p, "expected a finite numeric label at the start of the line");
  }
  if (options_.labels == LibsvmLabels::kBinary) {
    if (label != -1 && label != 0 && label != 1) {
      return error_at(begin, p, absl::StrCat("label ", label, " is not binary (expected -1/+1 or 0/1)"));
    }
    seen_minus_one_ |= label == -1;
    seen_zero_ |= label == 0;
    if (seen_minus_one_ && seen_zero_) {
      return error_at(begin, p, "labels mix -1 and 0: use either {-1, +1} or {0, 1}");
    }
    label = label > 0 ? 1 : 0;
  }
  p = after_label;

  int64_t previous = 0;
  while (true) {
    p = skip_blanks(p, end);
    if (p == end) break;
    const char* token = p;
    if (end - p > 4 && std::memcmp(p, "qid:", 4) == 0) {
      int64_t qid;
      auto [after, ec] = std::from_chars(p + 4, end, qid);
      if (ec != std::errc() || (after < end && !is_blank(*after))) return error_at(begin, token, "bad qid");
      p = after;
      continue;
    }
    int64_t index;
    auto [colon, index_ec] = std::from_chars(p, end, index);
    if (index_ec != std::errc() || colon == end || *colon != ':') {
      return error_at(begin, token, "expected <index>:<value>");
    }
    if (index <= previous) {
      return error_at(
          begin, token,
          index < 1 ? absl::StrCat("feature index ", index, " is not 1-based (must be >= 1)")
                    : absl::StrCat("feature index ", index, " does not follow ", previous, " (indices must ascend)"));
    }
    if (index > std::numeric_limits<int32_t>::max() || (options_.num_features > 0 && index > options_.num_features)) {
      return error_at(
          begin, token,
          absl::StrCat("feature index ", index, " exceeds the ",
                       options_.num_features > 0 ? options_.num_features : std::numeric_limits<int32_t>::max(),
                       " features allowed"));
    }
    float value;
    auto [after, value_ec] = parse_number(colon + 1, end, value);
    if (value_ec != std::errc() || (after < end && !is_blank(*after)) || !std::isfinite(value)) {
      return error_at(begin, colon + 1, "expected a finite f32 feature value");
    }
    matrix_.col_idx.push_back(static_cast<int32_t>(index - 1));
    matrix_.values.push_back(value);
    previous = index;
    p = after;
  }
  max_index_ = std::max(max_index_, previous);
  matrix_.labels.push_back(static_cast<float>(label));
  matrix_.row_ptr.push_back(static_cast<int64_t>(matrix_.col_idx.size()));
  return absl::OkStatus();
}

absl::StatusOr<CsrMatrix> LibsvmParser::finish() {
  if (!partial_line_.empty()) {
    ++line_number_;
    RETURN_IF_ERROR(parse_line(partial_line_));
    partial_line_.clear();
  }
  if (matrix_.rows() == 0) return absl::InvalidArgumentError(absl::StrCat(name_, ": no examples (empty file)"));
  matrix_.num_features = options_.num_features > 0 ? options_.num_features : max_index_;
  return std::move(matrix_);
}

absl::StatusOr<CsrMatrix> parse_libsvm(absl::string_view text, absl::string_view name, LibsvmOptions options) {
  LibsvmParser parser(std::string(name), options);
  RETURN_IF_ERROR(parser.feed(text));
  return parser.finish();
}

absl::StatusOr<CsrMatrix> read_libsvm(const std::string& path, LibsvmOptions options) {
  ASSIGN_OR_RETURN(auto reader, ChunkReader::open(path));
  LibsvmParser parser(path, options);
  std::string chunk;
  while (true) {
    chunk.clear();
    ASSIGN_OR_RETURN(const int64_t n, reader->read(chunk, 4 << 20));
    if (n == 0) break;
    RETURN_IF_ERROR(parser.feed(chunk));
  }
  return parser.finish();
}

absl::StatusOr<Tensor> to_dense(const CsrMatrix& matrix, int64_t max_features) {
  if (matrix.num_features > max_features) {
    return absl::InvalidArgumentError(
        absl::StrCat("to_dense: ", matrix.num_features, " features exceed the dense view's limit of ", max_features));
  }
  Tensor dense = zeros({matrix.rows(), matrix.num_features}, {DType::kF32});
  float* out = dense.data<float>();
  for (int64_t r = 0; r < matrix.rows(); ++r) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k) {
      out[r * matrix.num_features + matrix.col_idx[k]] = matrix.values[k];
    }
  }
  return dense;
}

absl::StatusOr<std::unique_ptr<LibsvmDataset>> LibsvmDataset::open(const std::string& path, LibsvmOptions options) {
  ASSIGN_OR_RETURN(CsrMatrix matrix, read_libsvm(path, options));
  return std::make_unique<LibsvmDataset>(std::move(matrix), options.labels);
}

absl::StatusOr<Example> LibsvmDataset::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("LibsvmDataset::get: index ", index, " outside [0, ", size(), ")"));
  }
  Tensor features = zeros({matrix_.num_features}, {DType::kF32});
  float* out = features.data<float>();
  for (int64_t k = matrix_.row_ptr[index]; k < matrix_.row_ptr[index + 1]; ++k) {
    out[matrix_.col_idx[k]] = matrix_.values[k];
  }
  const float label = matrix_.labels[index];
  Tensor label_tensor = labels_ == LibsvmLabels::kBinary ? scalar_tensor(static_cast<int64_t>(label), {DType::kI64})
                                                         : scalar_tensor(label, {DType::kF32});
  return Example{{std::move(features), std::move(label_tensor)}};
}

}  // namespace ts::data
