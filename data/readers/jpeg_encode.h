// JPEG encoding with libjpeg-turbo, for what writes JPEG image
// folders: the corpus tool (tools/corpus:jpeg_folder), tests and benchmarks.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ts::data {

enum class ChromaSubsampling { k444, k420 };

struct JpegEncodeOptions {
  int quality = 90;  // 1..100, libjpeg's scale
  ChromaSubsampling subsampling = ChromaSubsampling::k420;
};

// u8 [H, W, 3] RGB (contiguous) -> baseline JPEG bytes, deterministic for a
// given libjpeg-turbo build.
absl::StatusOr<std::string> encode_jpeg(const Tensor& rgb, const JpegEncodeOptions& options = {});

}  // namespace ts::data
