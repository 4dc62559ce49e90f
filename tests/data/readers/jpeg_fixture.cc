#include "tests/data/readers/jpeg_fixture.h"

#include <cstring>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::data::testing {

std::string jpeg_fixture_path(absl::string_view name) {
  return absl::StrCat("tests/data/readers/testdata/jpeg/", name);
}

std::string jpeg_fixture_bytes(absl::string_view name) {
  return ::ts::testing::value_or_die(read_file(jpeg_fixture_path(name)));
}

Tensor read_ppm_fixture(absl::string_view name) {
  const std::string bytes = jpeg_fixture_bytes(name);
  std::istringstream in(bytes);
  std::string magic;
  int64_t width = 0, height = 0, maxval = 0;
  in >> magic >> width >> height >> maxval;
  in.get();  // the one whitespace byte before the pixels
  const int64_t header = static_cast<int64_t>(in.tellg());
  if (magic != "P6" || maxval != 255 || width < 1 || height < 1 ||
      static_cast<int64_t>(bytes.size()) != header + width * height * 3) {
    ::ts::testing::ok_or_die(absl::DataLossError(absl::StrCat(name, ": not a P6 PPM of 8-bit pixels")));
  }
  Tensor out = Tensor::allocate({height, width, 3}, DType::kU8, Device::cpu());
  std::memcpy(out.raw_data(), bytes.data() + header, width * height * 3);
  return out;
}

void expect_same_pixels(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  const std::vector<uint8_t> a = to_vector<uint8_t>(actual), e = to_vector<uint8_t>(expected);
  int64_t differing = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != e[i] && differing++ == 0) first = static_cast<int64_t>(i);
  }
  ASSERT_EQ(differing, 0) << "of " << a.size() << "; the first at element " << first << ": " << int{a[first]}
                          << " vs Pillow's " << int{e[first]};
}

void expect_every_truncation_fails(std::initializer_list<const char*> names, absl::string_view file,
                                   const DecodeFn& decode) {
  for (const char* name : names) {
    const std::string bytes = jpeg_fixture_bytes(name);
    for (size_t n = 0; n < bytes.size(); ++n) {
      SCOPED_TRACE(::testing::Message() << name << " cut to " << n << " bytes");
      const absl::StatusOr<Tensor> rgb = decode(absl::string_view(bytes).substr(0, n), file);
      ASSERT_FALSE(rgb.ok());
      EXPECT_EQ(rgb.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_TRUE(absl::StartsWith(rgb.status().message(), absl::StrCat(file, ":"))) << rgb.status();
    }
  }
}

}  // namespace ts::data::testing
