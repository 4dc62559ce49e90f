#include "tasks/logreg/fashion_libsvm.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"

namespace ts::tasks {

bool is_upper_body(int64_t fashion_class) {
  return fashion_class == 0 || fashion_class == 2 || fashion_class == 4 || fashion_class == 6;
}

absl::Status write_upper_body_libsvm(const data::Dataset& images, const std::string& path) {
  std::string text;
  char value[16];
  for (int64_t i = 0; i < images.size(); ++i) {
    ASSIGN_OR_RETURN(data::Example example, images.get(i));
    const Tensor& image = example.fields[0];
    if (image.dtype() != DType::kU8 || !image.is_contiguous()) {
      return absl::InvalidArgumentError(absl::StrCat("write_upper_body_libsvm: example ", i, " is ", image.describe(),
                                                     "; expected contiguous u8 pixels"));
    }
    const int64_t label = *example.fields[1].data<int64_t>();
    text += is_upper_body(label) ? "+1" : "-1";
    const uint8_t* pixels = image.data<uint8_t>();
    double squares = 0;
    for (int64_t j = 0; j < image.numel(); ++j) squares += static_cast<double>(pixels[j]) * pixels[j];
    const double scale = squares > 0 ? 1 / std::sqrt(squares) : 0;
    for (int64_t j = 0; j < image.numel(); ++j) {
      if (pixels[j] == 0) continue;
      std::snprintf(value, sizeof(value), "%.6g", pixels[j] * scale);
      absl::StrAppend(&text, " ", j + 1, ":", value);
    }
    text += '\n';
  }
  return write_file_atomically(path, text);
}

}  // namespace ts::tasks
