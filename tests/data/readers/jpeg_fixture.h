// The Pillow fixture of the JPEG tests (tests/data/readers/testdata/jpeg,
// written by tools/golden/jpeg_pillow.py): JPEG files and the binary PPMs
// holding what Pillow decoded or resized.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::data::testing {

// The path of fixture file `name` (runfiles-relative, as tests run).
std::string jpeg_fixture_path(absl::string_view name);
// Its bytes (fatal if unreadable).
std::string jpeg_fixture_bytes(absl::string_view name);
// A binary PPM (P6, maxval 255) fixture as u8 [H, W, 3] (fatal if malformed).
Tensor read_ppm_fixture(absl::string_view name);

// actual equals Pillow's `expected` pixel for pixel (u8 of the same shape);
// a failure counts the differing values and shows the first.
void expect_same_pixels(const Tensor& actual, const Tensor& expected);

// Every proper prefix of each fixture in `names`, decoded by `decode` under
// the file name `file`, is a DataLoss error whose message starts with `file`.
using DecodeFn = std::function<absl::StatusOr<Tensor>(absl::string_view bytes, absl::string_view file)>;
void expect_every_truncation_fails(std::initializer_list<const char*> names, absl::string_view file,
                                   const DecodeFn& decode);

}  // namespace ts::data::testing
